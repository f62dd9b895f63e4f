// A subcommand of the kernelhub CLI. Each lives in cmd_<name>.cpp and registers itself with
// KERNELHUB_COMMAND(name, summary, function). Conventions: --help on every command, --json where
// a script wants the output, exit 0 on success, 1 on a failure the user can act on (one line on
// stderr), 2 on bad usage.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kernelhub::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

using CommandFunction = int (*)(std::span<const std::string> args);  // args after the name

struct Command {
  std::string_view name;
  std::string_view summary;
  CommandFunction run;
};

// Every registered command, sorted by name.
std::vector<Command> commands();

struct CommandRegistrar {
  CommandRegistrar(std::string_view name, std::string_view summary, CommandFunction run);
};

}  // namespace kernelhub::cli

#define KERNELHUB_COMMAND(name, summary, function) \
  static const ::kernelhub::cli::CommandRegistrar kernelhub_command_registrar_{name, summary, function}
