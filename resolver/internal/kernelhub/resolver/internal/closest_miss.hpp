// The closest miss: when no variant of a repo runs here, the one that comes nearest, what it
// needs that this environment lacks, and the change that makes it run. It leads the no-variant
// error, before the whole trace, as uv leads with the one conflict a user can act on:
//
//   no variant of `acme/norm` (revision: v1) runs here: the closest is
//   `torch215-cxx11-cu128-x86_64-linux`, which needs torch 2.15 (here: torch 2.11); install
//   torch 2.15, or ask the publisher for a `torch211-cxx11-cu128-x86_64-linux` build
//
// What blocks a variant: its reason, then the check that fails once that one is granted (the
// torch it needs, the CUDA it needs, ...), and so on until it passes, so that a variant that
// needs both another torch and another CUDA says both. A GPU fit rejection, another backend
// named by a noarch build and an ABI-tagged build off Linux cannot be granted; they end the list.
//
// Closest, deterministically, among the rejected variants whose names parse, by
//   1. the hardest change's cost (Change, below): a package in the Python environment beats
//      the interpreter or the process, which beats the machine, which beats what only the
//      publisher can change (device code for this GPU, another CPU or OS);
//   2. the number of changes (one beats two);
//   3. the first change's rank, most specific first: torch version, stable-ABI minimum, tvm-ffi
//      version, C++ ABI, CUDA, ROCm, MLX; Python version, a GIL Python, a process that can load
//      the kind; another backend, the driver, macOS; device code, noarch backend, CPU, OS;
//   4. the trace's order (select()'s: the `kernels` package's preference).
//
// Thread safety: pure functions over values.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernelhub/resolver/environment.hpp"
#include "kernelhub/resolver/loadable.hpp"
#include "kernelhub/resolver/reason.hpp"
#include "kernelhub/resolver/select.hpp"
#include "kernelhub/resolver/variant.hpp"

namespace kernelhub::resolver {

// Who can make a change, cheapest first.
enum class Change {
  kPackage,    // a package of the Python environment: torch, apache-tvm-ffi, mlx
  kProcess,    // the interpreter, or a process that can load the kind
  kMachine,    // the backend's hardware, the driver, the OS version
  kPublisher,  // only another build helps
};

// The cost class and rank of the change that grants a rejection (ranked as in the header).
Change change_for(ReasonCode code);
int change_rank(ReasonCode code);

struct ClosestMiss {
  std::string name;                 // the variant's directory name, as listed
  Variant variant;                  // as parsed
  std::vector<Reason> blocking;     // every check it fails here, first the decision's own
  std::optional<Variant> for_here;  // the same build made for this environment, when nameable
};

// The closest rejected variant of `decisions`; none when a decision is accepted, or no rejected
// name parses. `env` and `loadable`: those select() decided with.
std::optional<ClosestMiss> closest_miss(const std::vector<Decision>& decisions, const Environment& env,
                                        const Loadable& loadable);

// "the closest is `X`, which needs torch 2.15 (here: torch 2.11); install torch 2.15, or ask the
// publisher for a `Y` build".
std::string to_string(const ClosestMiss& miss);

// The no-variant error's text in kernelhub's words: "no variant of <what> runs here: <the closest
// miss>", a blank line, then the whole trace (format_trace). `what` is written as is ("`acme/norm`
// (revision: v1)").
std::string no_variant_message(std::string_view what, const std::vector<Decision>& decisions, const Environment& env,
                               const Loadable& loadable);

}  // namespace kernelhub::resolver
