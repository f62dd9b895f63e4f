#include <algorithm>

#include "command.hpp"

namespace kernelhub::cli {

namespace {
std::vector<Command>& registry() {
  static std::vector<Command> commands;
  return commands;
}
}  // namespace

CommandRegistrar::CommandRegistrar(std::string_view name, std::string_view summary, CommandDefine define) {
  registry().push_back(Command{name, summary, define});
}

std::vector<Command> commands() {
  std::vector<Command> sorted = registry();
  std::sort(sorted.begin(), sorted.end(), [](const Command& a, const Command& b) { return a.name < b.name; });
  return sorted;
}

}  // namespace kernelhub::cli
