#include "shared_library.hpp"

#include <dlfcn.h>
#include <link.h>

namespace kernelhub::tvm_ffi_loader {

SharedLibrary::~SharedLibrary() {
  if (handle_ != nullptr) dlclose(handle_);
}

SharedLibrary& SharedLibrary::operator=(SharedLibrary&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) dlclose(handle_);
    handle_ = other.handle_;
    other.handle_ = nullptr;
  }
  return *this;
}

Result<SharedLibrary> SharedLibrary::open(const std::filesystem::path& path, int flags) {
  dlerror();
  void* handle = dlopen(path.c_str(), flags);
  if (handle == nullptr) {
    const char* why = dlerror();
    return unexpected(ErrorCode::kLoadFailed,
                      "dlopen of `" + path.string() + "` failed: " + (why != nullptr ? why : "unknown error"));
  }
  return SharedLibrary(handle);
}

SharedLibrary SharedLibrary::if_loaded(const std::filesystem::path& path_or_soname, int flags) {
  return SharedLibrary(dlopen(path_or_soname.c_str(), flags | RTLD_NOLOAD));
}

void* SharedLibrary::symbol(const char* name) const {
  return handle_ != nullptr ? dlsym(handle_, name) : nullptr;
}

std::filesystem::path SharedLibrary::path() const {
  link_map* map = nullptr;
  if (handle_ == nullptr || dlinfo(handle_, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr || map->l_name == nullptr) {
    return {};
  }
  return map->l_name;
}

}  // namespace kernelhub::tvm_ffi_loader
