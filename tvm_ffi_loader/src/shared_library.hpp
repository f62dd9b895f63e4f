// SharedLibrary: a dlopen handle that closes itself.
#pragma once

#include <filesystem>

#include "kernelhub/base/result.hpp"

namespace kernelhub::tvm_ffi_loader {

class SharedLibrary {
 public:
  SharedLibrary() = default;
  ~SharedLibrary();
  SharedLibrary(SharedLibrary&& other) noexcept : handle_(other.handle_) { other.handle_ = nullptr; }
  SharedLibrary& operator=(SharedLibrary&& other) noexcept;
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;

  // dlopen by absolute path. Errors: kLoadFailed with the dynamic linker's reason.
  static Result<SharedLibrary> open(const std::filesystem::path& path, int flags);
  // Another reference to a library already in the process (RTLD_NOLOAD); empty when it is not.
  static SharedLibrary if_loaded(const std::filesystem::path& path_or_soname, int flags);

  void* symbol(const char* name) const;  // nullptr when absent
  std::filesystem::path path() const;    // as the dynamic linker recorded it
  explicit operator bool() const { return handle_ != nullptr; }

 private:
  explicit SharedLibrary(void* handle) : handle_(handle) {}
  void* handle_ = nullptr;
};

}  // namespace kernelhub::tvm_ffi_loader
