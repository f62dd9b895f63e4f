// MappedFile: a read-only mapping of a whole file, unmapped (and the file closed) on destruction,
// so that a library is looked into without copying it and pages nothing reads are never read.
#pragma once

#include <filesystem>
#include <string_view>

#include "kernelhub/base/result.hpp"

namespace kernelhub::binary_format {

class MappedFile {
 public:
  // Errors: kNotFound, kIo.
  static Result<MappedFile> open(const std::filesystem::path& path);
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&&) = delete;
  MappedFile(const MappedFile&) = delete;
  ~MappedFile();

  std::string_view bytes() const;

 private:
  MappedFile() = default;
  int fd_ = -1;
  void* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace kernelhub::binary_format
