// kernelhub: get GPU kernels from a Hub into a running program. One CLI11 app; each command is a
// subcommand defined in its cmd_<name>.cpp (command.hpp). Built three times: `kernelhub`, without
// LibTorch, `kernelhub-get`, which runs the commands that load it, and `kernelhub-serve`, which
// runs `serve` (torch_commands.hpp).
#include <cstdio>
#include <map>
#include <string>

#include "command.hpp"
#include "sibling_executable.hpp"

int main(int argc, char** argv) {
  using namespace kernelhub::cli;
  remember_arguments(argv);
  CLI::App app("Get prebuilt torch kernels from a Hugging Face Hub repo, verify them and load them.", "kernelhub");
  apply_conventions(app);
  app.set_version_flag("--version", "kernelhub " KERNELHUB_VERSION, "print the version and exit");
  app.require_subcommand(1);
  std::map<std::string, CommandRun, std::less<>> runs;
  std::map<std::string, std::string_view, std::less<>> elsewhere;  // command → the executable that runs it
  for (const auto& command : commands()) {
    CLI::App& subcommand = add_command(app, std::string(command.name), std::string(command.summary));
    if (command.define != nullptr) {
      runs.emplace(command.name, command.define(subcommand));
    } else {
      elsewhere.emplace(command.name, command.executable);
    }
  }
  // After the commands: not theirs.
  app.footer(
      "Run `kernelhub <command> --help` for a command's options.\n"
      "Exit status, the same in every command: 0 ok, 1 another failure (disk, load), 2 usage, 3 not found,\n"
      "4 no variant runs here, 5 the Hub could not be reached, 6 offline and not cached, 7 access refused,\n"
      "8 not trusted (publisher, signature), 9 a file is not what it should be (docs/CLI.md).");

  if (argc > 1 && std::string_view(argv[1]) == "help") {
    std::fputs(app.help().c_str(), stdout);
    return kExitOk;
  }
  if (argc > 1) {
    if (const auto found = elsewhere.find(std::string_view(argv[1])); found != elsewhere.end()) {
      return exec_sibling(found->second, found->first, argv);
    }
  }
  if (argc > 1 && argv[1][0] != '-' && !runs.contains(std::string_view(argv[1]))) {
    return usage_error(app, "unknown command `" + std::string(argv[1]) + "`");
  }
  if (auto status = parse(app, argc, argv)) return *status;
  const std::string name = app.get_subcommands().front()->get_name();
  try {
    return runs.at(name)();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kernelhub %s: error: %s\n", name.c_str(), kernelhub::printable(e.what()).c_str());
    return kExitFailure;
  }
}
