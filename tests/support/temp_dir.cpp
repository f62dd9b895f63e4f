#include "support/temp_dir.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdlib>

namespace kernelhub::testing {

namespace fs = std::filesystem;

TempDir::TempDir(const std::string& prefix) {
  static std::atomic<int> counter{0};
  const char* base = std::getenv("KERNELHUB_TEST_TMP");
  path_ = (base != nullptr ? fs::path(base) : fs::temp_directory_path()) /
          (prefix + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  fs::remove_all(path_);
  fs::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

}  // namespace kernelhub::testing
