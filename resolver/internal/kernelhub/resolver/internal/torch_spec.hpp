// TorchSpec: a torch named by hand, for selecting variants where no torch can be asked (the CLI's
// `--torch`, KERNELHUB_TORCH). The grammar is torch's own version string, so what
// `python -c "import torch; print(torch.__version__)"` prints on the target machine can be
// pasted as it is:
//   <major>.<minor>[.<patch>][+<backend>]    2.9   2.9.1+cu128   2.9+cpu   2.8.0+rocm6.4
// <backend> is torch's local version label (cpu, cu128, rocm6.4) or an environment backend
// (cuda12.8, rocm7.1, xpu2025.3, metal, ...; resolver::Backend). The patch is ignored: variants
// are built per major.minor.
//
// Thread safety: a value type.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "kernelhub/base/environment_source.hpp"
#include "kernelhub/base/result.hpp"
#include "kernelhub/resolver/environment.hpp"

namespace kernelhub::resolver {

struct TorchSpec {
  Version version;
  std::optional<Backend> backend;  // none: not said

  // Errors: kInvalidArgument naming the part that does not parse and the expected form.
  static Result<TorchSpec> parse(std::string_view text);
  // KERNELHUB_TORCH, where it is set: the one place the variable is read. Errors: kInvalidArgument,
  // `KERNELHUB_TORCH=`<value>` ...` naming what does not parse and the expected form.
  static Result<std::optional<TorchSpec>> from_environment(const EnvironmentSource& env);
  // "2.9", "2.9+cuda12.8": parse() reads it back to the same value.
  std::string to_string() const;

  // The torch this names: its backend (cpu when none is said), and the C++ ABI torch's Linux
  // wheels of that version were built with (cxx11 since 2.7, the pre-cxx11 ABI before).
  TorchRuntime runtime() const;
};

}  // namespace kernelhub::resolver
