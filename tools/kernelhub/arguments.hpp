// Arguments: a small parser for `--flag`, `--option VALUE`, `--option=VALUE` and positionals,
// enough for the CLI's conventions without another dependency.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

namespace kernelhub::cli {

struct ArgumentSpec {
  std::set<std::string, std::less<>> flags;    // e.g. "--json"
  std::set<std::string, std::less<>> options;  // take a value, e.g. "--revision"
};

struct Arguments {
  std::set<std::string, std::less<>> flags;
  std::map<std::string, std::string, std::less<>> options;
  std::vector<std::string> positionals;
  std::string error;  // non-empty when parsing failed: the message to print

  bool has(std::string_view flag) const { return flags.contains(flag); }
  std::optional<std::string> option(std::string_view name) const;
};

Arguments parse_arguments(std::span<const std::string> args, const ArgumentSpec& spec);

}  // namespace kernelhub::cli
