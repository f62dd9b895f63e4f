#include "kernelhub/loader/torch_backend.hpp"

#include <dlfcn.h>
#include <link.h>

#include <mutex>
#include <string>

namespace kernelhub::loader {

std::filesystem::path torch_library_dir() {
  std::filesystem::path out;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) -> int {
        const std::filesystem::path p(info->dlpi_name ? info->dlpi_name : "");
        if (p.filename() == "libc10.so") {
          *static_cast<std::filesystem::path*>(data) = p.parent_path();
          return 1;
        }
        return 0;
      },
      &out);
  return out;
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
    return unexpected(ErrorCode::kLoadFailed,
                      "cannot load `" + path.string() + "`: " + (why ? why : "unknown error"));
  }
  loaded = true;
  return {};
}

}  // namespace kernelhub::loader
