// find_torch(): the torch that a process without LibTorch (the CLI's torch-free commands)
// selects variants for, from the first of
//   1. KERNELHUB_TORCH   a TorchSpec (torch_spec.hpp): `2.9`, `2.9.1+cu128`; the CLI's --torch
//                        sets it
//   2. the torch package of the Python environment that would run here
//      (python_environment.hpp), read from its files, never imported (installed_torch.hpp)
// With the torch of a Python environment comes that environment's Python (its version, whether
// it is free-threaded, MLX and tvm_ffi: python_environment.hpp), since the `kernels` package
// running there would select for it. A torch named by KERNELHUB_TORCH comes without one: the
// caller takes the Python from KERNELHUB_PYTHON (the CLI's --python), or selects for none.
// A process that runs with LibTorch asks it instead (loader::torch_runtime).
//
// Thread safety: a free function; it reads files and may start one process (python_environment.hpp).
#pragma once

#include <string>

#include "kernelhub/base/environment_source.hpp"
#include "kernelhub/base/result.hpp"
#include "kernelhub/resolver/environment.hpp"

namespace kernelhub::resolver {

struct FoundTorch {
  TorchRuntime runtime;
  std::string source;                   // "KERNELHUB_TORCH", or "<torch dir> (VIRTUAL_ENV)"
  std::optional<PythonRuntime> python;  // the Python of the environment the torch is in
};

// Errors: kInvalidArgument when KERNELHUB_TORCH does not parse; kNotFound when it is unset and
// no Python environment with torch is found (the message says where it looked and what to set);
// kCorruptFile when the torch found has a version.py that does not parse.
Result<FoundTorch> find_torch(const EnvironmentSource& env);

}  // namespace kernelhub::resolver
