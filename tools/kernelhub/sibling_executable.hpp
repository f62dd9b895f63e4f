// Running a command that another executable of the CLI defines (torch_commands.hpp): the
// executable is looked for next to this one (/proc/self/exe, links resolved), in the build tree
// (build/bin/) as in an installed prefix (bin/), never on PATH, so each `kernelhub` runs its own
// `kernelhub-get`.
#pragma once

#include <filesystem>
#include <optional>
#include <string_view>

namespace kernelhub::cli {

// The path of `executable` in this executable's folder, when it is there.
std::optional<std::filesystem::path> sibling_path(std::string_view executable);

// main() keeps its argv here, for a command that hands itself to a sibling after it started.
void remember_arguments(char** argv);
char** remembered_arguments();

// Replaces this process with `executable` from this executable's folder, given `argv` as it
// is (argv[0] becomes the executable's path). Returns only when it cannot: after saying why on
// stderr, with kExitFailure.
int exec_sibling(std::string_view executable, std::string_view command, char** argv);

}  // namespace kernelhub::cli
