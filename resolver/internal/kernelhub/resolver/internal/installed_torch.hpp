// InstalledTorch: a torch package on disk (`site-packages/torch`), read without importing it.
// Two files of the wheel say what variant selection needs:
//   torch/version.py                         __version__, cuda, hip, xpu (TorchVersionInfo)
//   torch/share/cmake/Torch/TorchConfig.cmake   `-D_GLIBCXX_USE_CXX11_ABI=<0|1>` in
//                                            TORCH_CXX_FLAGS, where the wheel still says it;
//                                            otherwise that of torch's wheels of its version
//                                            (wheels_use_cxx11_abi)
//
// Thread safety: free functions; they read files.
#pragma once

#include <filesystem>
#include <string_view>

#include "kernelhub/base/result.hpp"
#include "kernelhub/resolver/environment.hpp"
#include "kernelhub/resolver/internal/torch_version_info.hpp"

namespace kernelhub::resolver {

struct InstalledTorch {
  std::filesystem::path dir;  // the torch package directory
  TorchRuntime runtime;
};

// The assignments of torch's generated version.py (`__version__ = '2.9.0+cu128'`,
// `cuda: Optional[str] = '12.8'`, `hip: Optional[str] = None`); cxx11_abi is left unknown.
// Errors: kCorruptFile when there is no `__version__ = '...'` line.
Result<TorchVersionInfo> parse_version_py(std::string_view text);

// The torch package at `dir`. Errors: kNotFound when dir has no version.py; kCorruptFile (naming
// the file) when version.py or a version in it does not parse.
Result<InstalledTorch> read_installed_torch(const std::filesystem::path& dir);

}  // namespace kernelhub::resolver
