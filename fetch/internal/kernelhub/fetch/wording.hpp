// Wording: whose words an error of a rule shared by the C++ API and the Python shim is written in.
//
// The rule is one: what is accepted, what is refused, the ErrorCode and Missing kind. Only the
// message differs. The C++ API and the CLI say what was asked, what was found and what to do with
// kernelhub's tools, each in its own spelling of a request (`{.revision = "<commit>"}` for a C++
// caller, `--revision <commit>` on the command line); the Python shim raises the `kernels`
// package's words verbatim (kernels 0.17.2), because code and tests written against kernels match
// on them.
#pragma once

namespace kernelhub {

enum class Wording {
  kKernelhub,  // the C++ API
  kCli,        // the command line: kernelhub's words, with its options
  kKernels,    // the `kernels` Python package's, for the Python shim
};

}  // namespace kernelhub
