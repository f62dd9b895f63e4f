#include <algorithm>
#include <map>
#include <memory>
#include <string>

#include "command.hpp"

namespace kernelhub::cli {

namespace {
std::vector<Command>& registry() {
  static std::vector<Command> commands;
  return commands;
}
}  // namespace

CommandRegistrar::CommandRegistrar(Command command) {
  registry().push_back(command);
}

namespace {
// The commands registered under `group` ("": the top-level ones), sorted by name.
std::vector<Command> registered(std::string_view group) {
  std::vector<Command> sorted;
  for (const Command& command : registry()) {
    if (command.group == group) sorted.push_back(command);
  }
  std::sort(sorted.begin(), sorted.end(), [](const Command& a, const Command& b) { return a.name < b.name; });
  return sorted;
}
}  // namespace

std::vector<Command> commands() {
  return registered({});
}

CommandRun define_subcommands(CLI::App& app, std::string_view group) {
  app.require_subcommand(1);
  auto runs = std::make_shared<std::map<std::string, CommandRun, std::less<>>>();
  for (const Command& command : registered(group)) {
    CLI::App& subcommand = add_command(app, std::string(command.name), std::string(command.summary));
    runs->emplace(command.name, command.define(subcommand));
  }
  return [runs, &app] { return runs->at(app.get_subcommands().front()->get_name())(); };
}

}  // namespace kernelhub::cli
