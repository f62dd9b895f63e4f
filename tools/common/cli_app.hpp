// The command-line conventions of both commands (`kernelhub` and `hub-publish`), on CLI11:
// -h/--help on every command, printing a usage line, what the command does and every option
// with what it does; values as `--option V` or `--option=V`, the last one given winning; flags
// that take no value. A failure is one message on stderr, `<command>: error: <message>`, and with
// --json also {"error": {"code", "message", ...}} on stdout; its exit status says its kind, the
// same in every command (docs/CLI.md has the table): 0 success, 1 another failure (disk, load,
// bug), 2 bad usage (CLI11's own parse errors included: the error and the usage line, the help
// only with --help), 3 not found, 4 no variant runs here, 5 the Hub could not be reached, 6
// offline and not cached, 7 access refused, 8 not trusted (publisher, signature), 9 a file is not
// what it should be. Text that came from a Hub or a kernel's files (names, metadata, a server's
// message) is printed through printable() (kernelhub/base/internal/printable.hpp): fail() and
// say_fallbacks() do, and so does every command's text output; --json leaves it to JSON's escapes.
//
// Thread safety: none needed (one parse per process, on the main thread).
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernelhub/base/error.hpp"
#include "kernelhub/base/internal/printable.hpp"

namespace kernelhub::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;      // io, load_failed, op_schema_mismatch, kernel_raised, internal
inline constexpr int kExitUsage = 2;        // invalid_argument, and the command line
inline constexpr int kExitNotFound = 3;     // not_found
inline constexpr int kExitNoVariant = 4;    // no_compatible_variant, incompatible_binary, client_too_old
inline constexpr int kExitUnreachable = 5;  // network
inline constexpr int kExitOfflineMiss = 6;  // offline_miss
inline constexpr int kExitAccess = 7;       // unauthorized, gated
inline constexpr int kExitUntrusted = 8;    // untrusted_publisher, bad_signature, missing_signature
inline constexpr int kExitIntegrity = 9;    // integrity_mismatch, corrupt_file, dependency_cycle

// The exit status of a failure of kind `code` (the table above).
int exit_status(ErrorCode code);

// Reports a failed command: `<command>: error: <message>` on stderr, and with `json` the error
// object (error_json.hpp) on stdout. Returns exit_status(error.code).
int fail(std::string_view command, const Error& error, bool json);

// Says each answer a command took from the cache instead of the Hub: `<command>: note: <it>` on
// stderr (a --json output also lists them, under "fallbacks").
void say_fallbacks(std::string_view command, const std::vector<std::string>& fallbacks);

// Gives `app` (before its options are added) the conventions above and our help layout. Its
// subcommands inherit them.
void apply_conventions(CLI::App& app);

// Adds the subcommand `name` to `app` (which has the conventions), listed with `summary` in the
// app's help; the command's own help shows the description it is given.
CLI::App& add_command(CLI::App& app, const std::string& name, const std::string& summary);

// Parses the arguments. nullopt: run the command (the selected subcommand, if any). Otherwise
// the exit status, after printing the help to stdout (status 0) or, for bad usage, usage_error's
// lines (status 2).
std::optional<int> parse(CLI::App& app, int argc, const char* const* argv);

// For every numeric option, as ->transform(whole_number()): decimal digits only, no sign (CLI11
// alone would read `010` as octal and wrap `-1` around for an unsigned option).
CLI::Validator whole_number();

// For bad usage: prints `<command>: error: <why>` and the command's usage line to stderr (with
// --json given, the error object on stdout too) and returns kExitUsage.
int usage_error(const CLI::App& command, std::string_view why);

// "kernelhub download" for the download subcommand of the kernelhub app.
std::string command_path(const CLI::App& command);

}  // namespace kernelhub::cli
