// The machine a torch-free command (download, variants, env) selects variants for: this one
// (resolver::Environment::detect: os, cpu, glibc, CUDA driver, GPUs), with the torch of
//   1. --torch SPEC        what KERNELHUB_TORCH=SPEC would say, for this command only
//   2. KERNELHUB_TORCH     2.9, or torch's full version: 2.9.1+cu128 (resolver/torch_spec.hpp)
//   3. the Python environment's torch, read from its files without importing it
//      (VIRTUAL_ENV, then python3 on PATH; resolver/torch_lookup.hpp)
// the Python of
//   1. --python X.Y[t]     what KERNELHUB_PYTHON=X.Y[t] would say, for this command only
//   2. KERNELHUB_PYTHON    3.12, or 3.13t for a free-threaded build
//   3. the Python environment the torch was found in (its version from its files; MLX and
//      tvm_ffi from its packages), as the `kernels` package running there would see it
//   4. none (a torch named by hand, and no Python named): no cpython minimum applies
// and the other KERNELHUB_* overrides. With a torch, what a Python process loads is selected for.
// With none (none found, none named), the machine is selected for as `kernelhub get` loads kernels
// on it without torch: tvm-ffi builds only, for the TVM-FFI runtime kernelhub finds here
// (tvm_ffi_loader/runtime.hpp; KERNELHUB_TVM_FFI names its version instead), the backend of the
// machine's driver (tvm_ffi_load.hpp); say_torch_free() says so, once, on stderr.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "kernelhub/base/environment_source.hpp"
#include "kernelhub/base/result.hpp"
#include "kernelhub/resolver/environment.hpp"
#include "kernelhub/resolver/loadable.hpp"

namespace kernelhub::cli {

struct SelectionEnvironment {
  resolver::Environment environment;
  EnvironmentSource env;      // the command's configuration, with --torch and --python as KERNELHUB_*
  std::string torch_source;   // where the torch came from; empty when none was found
  std::string torch_missing;  // why none was found
  // What loads here: a Python process with the torch found; without one, kernelhub itself
  // (tvm-ffi builds only, resolver::Loadable::torch_free_process()).
  resolver::Loadable loadable = resolver::Loadable::python_process();
  // Without a torch: what is selected for instead, in words (say_torch_free); empty with a torch.
  std::string torch_free;
};

// What a command does when no torch is found and none is named.
enum class WithoutTorch {
  kSelectTorchFree,  // select what kernelhub loads without torch (see above)
  kDescribe,         // describe the machine without torch, and look for nothing else (env, --cases)
};

// What a command that selects variants is told on its command line, instead of looking.
struct SelectionFlags {
  std::optional<std::string> torch;   // --torch SPEC
  std::optional<std::string> python;  // --python X.Y[t]
};

// Adds --torch SPEC and --python X.Y[t] to a command that selects variants.
void add_selection_options(CLI::App& app, SelectionFlags& flags);

// Errors: kInvalidArgument for a --torch or KERNELHUB_* value that does not parse; kCorruptFile
// for a torch whose version.py does not parse. No torch is no error (see WithoutTorch).
Result<SelectionEnvironment> selection_environment(const EnvironmentSource& env, const SelectionFlags& flags,
                                                   WithoutTorch without_torch = WithoutTorch::kSelectTorchFree);

// "`command`: note: no torch here (why); selecting the builds that load without it: ..." on stderr,
// when the selection is torch-free.
void say_torch_free(std::string_view command, const SelectionEnvironment& selection);

}  // namespace kernelhub::cli
