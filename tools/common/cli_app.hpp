// The command-line conventions of both commands (`kernelhub` and `hub-publish`), on CLI11:
// -h/--help on every command, printing a usage line, what the command does and every option
// with what it does; values as `--option V` or `--option=V`, the last one given winning; flags
// that take no value; exit status 0 on success, 1 on a failure the user can act on (one message
// on stderr), 2 on bad usage (CLI11's own parse errors included), with the command's help.
//
// Thread safety: none needed (one parse per process, on the main thread).
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace kernelhub::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

// Gives `app` (before its options are added) the conventions above and our help layout. Its
// subcommands inherit them.
void apply_conventions(CLI::App& app);

// Adds the subcommand `name` to `app` (which has the conventions), listed with `summary` in the
// app's help; the command's own help shows the description it is given.
CLI::App& add_command(CLI::App& app, const std::string& name, const std::string& summary);

// Parses the arguments. nullopt: run the command (the selected subcommand, if any). Otherwise
// the exit status, after printing the help to stdout (status 0) or, for bad usage, the error and
// the help of the command it concerns to stderr (status 2).
std::optional<int> parse(CLI::App& app, int argc, const char* const* argv);

// For every numeric option, as ->transform(whole_number()): decimal digits only, no sign (CLI11
// alone would read `010` as octal and wrap `-1` around for an unsigned option).
CLI::Validator whole_number();

// For bad usage a command finds after parsing: prints `<command>: <why>` and the command's help
// to stderr and returns kExitUsage.
int usage_error(const CLI::App& command, std::string_view why);

// "kernelhub download" for the download subcommand of the kernelhub app.
std::string command_path(const CLI::App& command);

}  // namespace kernelhub::cli
