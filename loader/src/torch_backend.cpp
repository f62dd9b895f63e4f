#include "kernelhub/loader/torch_backend.hpp"

#include <dlfcn.h>

#include <mutex>
#include <string>

#include "loaded_libraries.hpp"

namespace kernelhub::loader {

std::filesystem::path torch_library_dir() {
  const auto libraries = loaded_libraries();
  const auto c10 = libraries.find("libc10.so");
  return c10 == libraries.end() ? std::filesystem::path() : std::filesystem::path(c10->second).parent_path();
}

Status ensure_torch_cuda_loaded() {
  static std::mutex mutex;
  static bool loaded = false;
  std::lock_guard lock(mutex);
  if (loaded) return {};
  const auto dir = torch_library_dir();
  const auto path = dir / "libtorch_cuda.so";
  std::error_code ec;
  if (dir.empty() || !std::filesystem::exists(path, ec)) {
    return unexpected(ErrorCode::kNotFound, "this LibTorch (" + dir.string() +
                                                ") has no libtorch_cuda.so: it is a CPU-only build; install a CUDA "
                                                "build of torch or use a CPU variant");
  }
  // Never closed: torch's CUDA hooks and the kernels that use them live as long as the process.
  if (dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL) == nullptr) {
    const char* why = dlerror();
    return unexpected(ErrorCode::kLoadFailed, "cannot load `" + path.string() + "`: " + (why ? why : "unknown error"));
  }
  loaded = true;
  return {};
}

}  // namespace kernelhub::loader
