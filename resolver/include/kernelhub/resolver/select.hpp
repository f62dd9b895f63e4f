// select(): which of a repo's build variants can run here, best first, with a reason for each.
//
// Acceptance and order mirror the `kernels` package (kernels/src/kernels/variants.py
// `_check_variants` and `_sort_variants`):
//   accept  cpu and os equal; torch major.minor equal (arch builds); a cxx11/cxx98 tag equal to
//           the runtime ABI (untagged fits any; off Linux the ABI counts as unknown, so tagged
//           builds do not fit); stable-ABI version <= torch; tvm-ffi version equal to
//           Environment::tvm_ffi; CUDA variant of the same major with minor <= the environment's;
//           other backends exactly equal; noarch torch-<kind> of the selected backend's kind;
//           torch-universal always; no arch build on free-threaded Python < 3.15.
//   order   stable ABI (newest first), torch arch (untagged before tagged, newer backend minor
//           first), tvm-ffi, noarch, universal; rejected last, by name. Where `_sort_variants`
//           ties (tvm-ffi of backend minor 0 and a noarch variant), its order is its input's (a
//           set's); ours puts tvm-ffi first.
//   reasons values (reason.hpp) whose text is the `kernels` package's wording, backends as variant
//           tokens ("cu128").
// Knowing differences from the `kernels` package:
//   - arch variants on free-threaded Python < 3.15 stay in the trace, rejected with its reason
//     (`_check_variants` drops them from the trace);
//   - names that do not parse (including an unknown cpu or os) stay in the trace, rejected
//     with the parser's reason (the kernels package drops them, or parses any cpu/os token);
//   - Metal arch variants are not checked against the macOS version (>= 26 there): the
//     Environment has no macOS version.
// With `native_only` (a C++ process without Python), pure-Python variants (noarch, universal) are
// rejected, since nothing here can import them, and of the native builds only those the caller
// loads: torch builds (`loads_torch`: LibTorch, get_kernel) and tvm-ffi builds (`loads_tvm_ffi`:
// libtvm_ffi, tvm_ffi::get_kernel); the others say why in the trace.
//
// Selection is data: nothing throws, unknown names are rejected with the parser's reason.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kernelhub/resolver/environment.hpp"
#include "kernelhub/resolver/reason.hpp"
#include "kernelhub/resolver/variant.hpp"

namespace kernelhub::resolver {

struct Decision {
  std::string name;                // the directory name as listed
  std::optional<Variant> variant;  // none when the name does not parse
  Reason reason;                   // why rejected, or reason::Compatible; to_string() says it

  bool accepted() const { return is_accepted(reason); }
};

struct SelectOptions {
  bool native_only = false;
  bool loads_torch = true;     // with native_only: torch and stable-ABI arch builds
  bool loads_tvm_ffi = false;  // with native_only: tvm-ffi builds
};

std::vector<Decision> select(const std::vector<std::string>& names, const Environment& env,
                             const SelectOptions& options = {});

// The first accepted decision, if any.
const Decision* chosen(const std::vector<Decision>& decisions);

// One line per decision: "<name>: <reason>"; accepted ones say "compatible" (without the GPU fit's
// note), the chosen one "compatible, preferred ✅".
std::string format_trace(const std::vector<Decision>& decisions);

}  // namespace kernelhub::resolver
