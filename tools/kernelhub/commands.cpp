#include <algorithm>

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

std::vector<Command> commands() {
  std::vector<Command> sorted = registry();
  std::sort(sorted.begin(), sorted.end(), [](const Command& a, const Command& b) { return a.name < b.name; });
  return sorted;
}

}  // namespace kernelhub::cli
