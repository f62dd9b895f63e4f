// A subcommand of the kernelhub CLI. Each lives in cmd_<name>.cpp and registers itself with
// KERNELHUB_COMMAND(name, summary, define): `define` adds the command's description, arguments
// and options to its CLI11 app (cli_app.hpp has the conventions: --help, --json where a script
// wants the output, exit status 0 / 1 / 2) and returns what runs it once they are parsed.
// KERNELHUB_SIBLING_COMMAND(name, summary, executable) lists a command that another executable
// next to this one defines and runs (torch_commands.hpp). A command group (`kernelhub cache ls`)
// is a command whose define returns define_subcommands(app, "cache"); each of its subcommands lives
// in its own cmd_<group>_<name>.cpp and registers itself with KERNELHUB_SUBCOMMAND(group, name,
// summary, define).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string_view>
#include <vector>

#include "cli_app.hpp"

namespace kernelhub::cli {

// Runs the command with the arguments parsed into it; returns the exit status.
using CommandRun = std::function<int()>;
using CommandDefine = CommandRun (*)(CLI::App& app);

struct Command {
  std::string_view name;
  std::string_view summary;
  CommandDefine define = nullptr;  // none: `executable` runs it
  std::string_view executable;     // for one defined in another executable
  std::string_view group;          // for a subcommand: the command it belongs to
};

// Every registered top-level command, sorted by name.
std::vector<Command> commands();

// Adds the subcommands registered under `group` to `app` (the group's command); one of them must
// be given. Returns what runs the one given.
CommandRun define_subcommands(CLI::App& app, std::string_view group);

struct CommandRegistrar {
  explicit CommandRegistrar(Command command);
};

}  // namespace kernelhub::cli

#define KERNELHUB_COMMAND(name, summary, define)                                 \
  static const ::kernelhub::cli::CommandRegistrar kernelhub_command_registrar_ { \
    ::kernelhub::cli::Command {                                                  \
      name, summary, define, {}                                                  \
    }                                                                            \
  }

#define KERNELHUB_SUBCOMMAND(group, name, summary, define)                          \
  static const ::kernelhub::cli::CommandRegistrar kernelhub_subcommand_registrar_ { \
    ::kernelhub::cli::Command {                                                     \
      name, summary, define, {}, group                                              \
    }                                                                               \
  }

#define KERNELHUB_SIBLING_COMMAND(name, summary, executable)                             \
  static const ::kernelhub::cli::CommandRegistrar kernelhub_sibling_command_registrar_ { \
    ::kernelhub::cli::Command {                                                          \
      name, summary, nullptr, executable                                                 \
    }                                                                                    \
  }
