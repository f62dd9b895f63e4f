#include "kernelhub/loader/torch_runtime.hpp"

#include "kernelhub/loader/torch_libraries.hpp"

#include <ATen/detail/CUDAHooksInterface.h>
#include <dlfcn.h>
#include <torch/version.h>

#include <filesystem>
#include <fstream>
#include <regex>

namespace kernelhub::loader {

namespace {

// Reads `cuda = '13.2'` (or hip/xpu) from torch/version.py next to torch/lib.
std::optional<resolver::Backend> backend_from_version_py() {
  const auto dir = TorchLibraries::of_this_process().lib_dir;
  if (dir.empty()) return std::nullopt;
  std::ifstream in(dir.parent_path() / "version.py");
  if (!in) return std::nullopt;
  const std::regex line_re(R"(^(cuda|hip|xpu)\s*(?::[^=]*)?=\s*'([0-9.]+)[^']*')");
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (!std::regex_search(line, m, line_re)) continue;
    auto version = resolver::Version::parse(m[2].str());
    if (!version) continue;
    const std::string kind = m[1].str();
    if (kind == "cuda") return resolver::Backend{resolver::BackendKind::kCuda, *version};
    if (kind == "hip") return resolver::Backend{resolver::BackendKind::kRocm, *version};
    return resolver::Backend{resolver::BackendKind::kXpu, *version};
  }
  return std::nullopt;
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
