#include "kernelhub/loader/internal/torch_runtime.hpp"

#include "kernelhub/binary_format/internal/torch_libraries.hpp"
#include "kernelhub/resolver/internal/installed_torch.hpp"

#include <ATen/detail/CUDAHooksInterface.h>
#include <dlfcn.h>
#include <torch/version.h>

namespace kernelhub::loader {

namespace {

// torch/version.py next to torch/lib says which CUDA/ROCm/XPU torch was built for.
std::optional<resolver::Backend> backend_from_version_py() {
  const auto dir = binary_format::TorchLibraries::of_this_process().lib_dir;
  if (dir.empty()) return std::nullopt;
  auto torch = resolver::read_installed_torch(dir.parent_path());
  if (!torch) return std::nullopt;
  return torch->runtime.backend;
}

}  // namespace

resolver::TorchRuntime torch_runtime() {
  resolver::TorchRuntime rt;
  rt.version = resolver::Version{TORCH_VERSION_MAJOR, TORCH_VERSION_MINOR};
  rt.cxx11_abi = _GLIBCXX_USE_CXX11_ABI != 0;
  // Only ask torch's CUDA hooks when libtorch_cuda is already loaded: the first call to
  // getCUDAHooks() fixes the hooks for the life of the process, and asking before libtorch_cuda
  // is loaded (ensure_torch_cuda_loaded) would leave CUDA unusable here for good.
  if (void* cuda = dlopen("libtorch_cuda.so", RTLD_LAZY | RTLD_NOLOAD)) {
    dlclose(cuda);
    try {
      const long cudart = at::detail::getCUDAHooks().versionCUDART();
      if (cudart > 0) {
        rt.backend =
            resolver::Backend{resolver::BackendKind::kCuda,
                              resolver::Version{static_cast<int>(cudart / 1000), static_cast<int>(cudart % 1000 / 10)}};
        return rt;
      }
    } catch (const std::exception&) {
      // Fall through to version.py.
    }
  }
  if (auto backend = backend_from_version_py()) rt.backend = *backend;
  return rt;
}

}  // namespace kernelhub::loader
