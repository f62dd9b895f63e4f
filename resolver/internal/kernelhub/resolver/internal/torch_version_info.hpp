// TorchVersionInfo: what a torch build says about itself, as text (torch.__version__ and the
// torch.version module), made into what selection takes (TorchRuntime) the way the `kernels`
// package reads it (kernels/backends.py, kernels/variants.py):
//
//   version    torch.__version__, "2.9.0+cu128": its major.minor
//   backend    the first of torch.version.cuda ("12.8"), torch.version.hip
//              ("6.4.43482-0f2d60242": rocm6.4, or torch.version.rocm where torch >= 2.10 has it:
//              the ROCm release, which can differ from HIP's) and torch.version.xpu ("20250100":
//              xpu2025.1) that is set; cpu when none is
//   cxx11_abi  torch.compiled_with_cxx11_abi(), when known
//
// The text comes from an imported torch (the Python binding) or from the files of an installed
// one (installed_torch.hpp).
//
// Thread safety: a value type.
#pragma once

#include <optional>
#include <string>

#include "kernelhub/base/result.hpp"
#include "kernelhub/resolver/environment.hpp"

namespace kernelhub::resolver {

struct TorchVersionInfo {
  std::string version;
  std::optional<std::string> cuda;
  std::optional<std::string> hip;
  std::optional<std::string> xpu;
  std::optional<bool> cxx11_abi;
  std::optional<std::string> rocm;

  // Errors: kInvalidArgument naming the attribute whose text does not parse.
  Result<TorchRuntime> runtime() const;
};

// The C++ ABI of torch's Linux wheels of version `torch`: cxx11 from 2.7 on, the pre-cxx11 ABI
// before (kernel-builder's torch26-cxx98 variants are for those).
bool wheels_use_cxx11_abi(const Version& torch);

}  // namespace kernelhub::resolver
