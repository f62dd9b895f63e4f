// Running a command that another executable of the CLI defines (torch_commands.hpp): the
// executable is looked for next to this one (/proc/self/exe, links resolved), in the build tree
// (build/bin/) as in an installed prefix (bin/), never on PATH, so each `kernelhub` runs its own
// `kernelhub-get`.
#pragma once

#include <string_view>

namespace kernelhub::cli {

// Replaces this process with `executable` from this executable's folder, given `argv` as it
// is (argv[0] becomes the executable's path). Returns only when it cannot: after saying why on
// stderr, with kExitFailure.
int exec_sibling(std::string_view executable, std::string_view command, char** argv);

}  // namespace kernelhub::cli
