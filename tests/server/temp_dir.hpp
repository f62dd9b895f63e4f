// The tests' TempDir (tests/support/temp_dir.hpp), and what server tests check in one.
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "support/temp_dir.hpp"

namespace kernelhub::server::testing {

using kernelhub::testing::TempDir;

// Every regular file below `dir`, relative, sorted: used to prove a request wrote nothing.
inline std::vector<std::string> list_files(const std::filesystem::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) out.push_back(std::filesystem::relative(e.path(), dir).string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace kernelhub::server::testing
