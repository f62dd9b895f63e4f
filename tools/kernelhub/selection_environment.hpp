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
// and the other KERNELHUB_* overrides.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "kernelhub/base/environment_source.hpp"
#include "kernelhub/base/result.hpp"
#include "kernelhub/resolver/environment.hpp"

namespace kernelhub::cli {

struct SelectionEnvironment {
  resolver::Environment environment;
  EnvironmentSource env;      // the command's configuration, with --torch and --python as KERNELHUB_*
  std::string torch_source;   // where the torch came from; empty when none was found
  std::string torch_missing;  // why none was found (with torch_required = false)
};

// What a command that selects variants is told on its command line, instead of looking.
struct SelectionFlags {
  std::optional<std::string> torch;   // --torch SPEC
  std::optional<std::string> python;  // --python X.Y[t]
};

// Adds --torch SPEC and --python X.Y[t] to a command that selects variants.
void add_selection_options(CLI::App& app, SelectionFlags& flags);

// torch_required = false describes the machine without torch when none is found (env, and the
// differential test's --cases, whose cases each name a torch). Errors: kInvalidArgument for a
// --torch or KERNELHUB_* value that does not parse; kNotFound when no torch is found (the
// message says what to give); kCorruptFile for a torch whose version.py does not parse.
Result<SelectionEnvironment> selection_environment(const EnvironmentSource& env, const SelectionFlags& flags,
                                                   bool torch_required = true);

}  // namespace kernelhub::cli
