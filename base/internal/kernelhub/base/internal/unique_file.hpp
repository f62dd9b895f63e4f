// UniqueFile: a stdio FILE* that closes itself (RAII for C file handles).
#pragma once

#include <cstdio>
#include <filesystem>
#include <memory>

namespace kernelhub {

struct FileCloser {
  void operator()(std::FILE* file) const {
    if (file != nullptr) std::fclose(file);
  }
};
using UniqueFile = std::unique_ptr<std::FILE, FileCloser>;

inline UniqueFile open_file(const std::filesystem::path& path, const char* mode) {
  return UniqueFile(std::fopen(path.c_str(), mode));
}

}  // namespace kernelhub
