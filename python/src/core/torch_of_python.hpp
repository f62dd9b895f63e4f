// The torch a Python process imported, as the `kernels` package reads it, made into what the
// resolver takes (resolver::TorchRuntime). The Python side only reads torch's attributes and
// passes their text in; what they mean is decided here, once.
//
//   version    torch.__version__, "2.9.0+cu128": its major.minor (kernels/variants.py)
//   cxx11_abi  torch.compiled_with_cxx11_abi()
//   backend    the first of torch.version.cuda ("12.8"), torch.version.hip ("6.4.43482-0f2d60242":
//              rocm6.4) and torch.version.xpu ("20250100": xpu2025.1, kernels/backends.py takes
//              characters 0-3 and 5) that is set; cpu when none is
//
// No version (no torch in the process): the runtime has no torch version, as kernels has none
// without torch, so only variants that need no torch build qualify.
#pragma once

#include <optional>
#include <string>

#include "kernelhub/base/result.hpp"
#include "kernelhub/resolver/environment.hpp"

namespace kernelhub::python {

struct PythonTorch {
  std::optional<std::string> version;
  std::optional<bool> cxx11_abi;
  std::optional<std::string> cuda;
  std::optional<std::string> hip;
  std::optional<std::string> xpu;
};

// Errors: kInvalidArgument naming the attribute whose text does not parse.
Result<resolver::TorchRuntime> torch_runtime_of(const PythonTorch& torch);

}  // namespace kernelhub::python
