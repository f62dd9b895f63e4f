// The command line's words for what a fetch found (fetch/internal/kernelhub/fetch/internal/problem.hpp):
// kernelhub's, with the request spelled in the CLI's options (`--revision <commit>`,
// `--version 1`) where the message spells it for a C++ caller (`{.revision = "<commit>"}`).
// fail() and error_json() say every error of a command in them.
//
// Thread safety: a free function over values.
#pragma once

#include <string>

#include "kernelhub/base/error.hpp"

namespace kernelhub::cli {

// The message the CLI prints for `error`.
std::string cli_message(const Error& error);

}  // namespace kernelhub::cli
