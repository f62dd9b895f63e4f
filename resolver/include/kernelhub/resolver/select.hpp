// select(): which of a repo's build variants can run here, best first, with a reason for each.
//
// Acceptance, order and reasons are those of the `kernels` package 0.19.1
// (kernels/_internals/variants.py `_check_variants` and `_sort_variants`), checked against it on
// generated cases of both name forms (tests/python/test_resolver_differential.py):
//   accept  arch (and compiled sdk) builds: the cpython minimum <= this Python, abi3 not on a
//           free-threaded Python (abi3t needs 3.15: the name says so), cpu and os equal; torch
//           major.minor equal and a cxx11/cxx98 tag equal to torch's ABI (untagged fits any;
//           off Linux the ABI counts as unknown, so tagged builds do not fit); stable-ABI version
//           <= torch; tvm-ffi version equal to Environment::tvm_ffi; CUDA and ROCm of the same
//           major with a minor not newer than the selected backend's; other backends equal (and
//           Metal on macOS >= 26). Noarch torch-<name>/mlx-<name>: <name> is the selected
//           backend's kind (cuda, rocm, xpu, cann, cpu, metal, neuron, tpu) or `universal`, and
//           mlx-<name> needs MLX; torch-npu no longer matches (torch-cann does). sdk: always;
//           sdk-<name> of the selected kind; compiled sdk as an arch build.
//   order   accepted first, then (the `kernels` key) stable ABI (newest first) > torch (untagged
//           before tagged) > tvm-ffi > compiled sdk (named backend before none) > noarch (named
//           before universal) > sdk-<name> > sdk; within a group the higher backend minor, then
//           abi3 before abi3t, then the higher cpython minimum.
//   ties    where the `kernels` key ties, its choice follows the order of a Python set (it
//           varies from run to run); ours is fixed, by
//             1. the explicit-form name before the legacy-form name of the same build. Both are
//                the same build; the explicit name is the one kernel-builder writes since 0.19
//                and says the Python ABI instead of implying it, while a legacy twin is kept for
//                older clients. Picking it also keeps the choice stable when a publisher later
//                drops the legacy copy.
//             2. for noarch builds of the same backend name, the framework the process has:
//                torch-<name> where there is a torch (Environment::torch), mlx-<name> where not;
//             3. the name.
//   reasons values (reason.hpp) whose text is the `kernels` package's wording.
// What the process can load is an input (loadable.hpp): a process without LibTorch rejects torch
// and stable-ABI builds first, one without Python pure-Python and sdk variants, one without a
// TVM-FFI loader tvm-ffi builds; each says so in its reason.
//
// Deliberate differences from the `kernels` package:
//   - names that do not parse stay in the decisions, rejected with the parser's reason, after
//     every parsed one (the `kernels` package leaves them out, logging a warning). The parser is
//     stricter on numbers (variant.hpp: leading zeros and more than 9 digits are refused), and
//     `torch` alone is not a variant;
//   - Environment::backend, not torch's: a CUDA torch on a machine without a CUDA driver selects
//     cpu variants (environment.hpp);
//   - the macOS version is compared as major.minor.
//
// Selection is data: nothing throws, no I/O, unknown names are rejected with the parser's reason.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kernelhub/resolver/environment.hpp"
#include "kernelhub/resolver/loadable.hpp"
#include "kernelhub/resolver/reason.hpp"
#include "kernelhub/resolver/variant.hpp"

namespace kernelhub::resolver {

// Metal kernels are built with -std=metal4.0, which needs macOS 26 (variants.py).
inline constexpr Version kMetalMinMacos{26, 0};

struct Decision {
  std::string name;                // the directory name as listed
  std::optional<Variant> variant;  // none when the name does not parse
  Reason reason;                   // why rejected, or reason::Compatible; to_string() says it

  bool accepted() const { return is_accepted(reason); }
};

std::vector<Decision> select(const std::vector<std::string>& names, const Environment& env,
                             const Loadable& loadable = Loadable::python_process());

// Why `v` can or cannot run in `env` for this process: select()'s checks of one parsed variant,
// in the `kernels` package's order; the first that fails is the reason.
Reason check_variant(const Variant& v, const Environment& env, const Loadable& loadable);

// The first accepted decision, if any.
const Decision* chosen(const std::vector<Decision>& decisions);

// The trace as the `kernels` package prints it (variants.py `variants_trace_str`), one line per
// decision: "<name>: <reason>" for a rejected one, "<name> compatible ✅" for an accepted one and
// "<name> compatible, preferred ✅" for the chosen one (the `kernels` package also marks a
// legacy/explicit twin of its choice as preferred; here only the one chosen is). How a variant
// runs on the GPUs is in its reason, not in the trace.
std::string format_trace(const std::vector<Decision>& decisions);

}  // namespace kernelhub::resolver
