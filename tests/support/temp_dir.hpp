// TempDir: a fresh folder for one test, removed with everything in it when the test ends. Under
// $KERNELHUB_TEST_TMP (ctest sets it to <build>/test-tmp), else the system's temp folder.
#pragma once

#include <filesystem>
#include <string>

namespace kernelhub::testing {

class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "test");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace kernelhub::testing
