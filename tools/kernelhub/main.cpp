// kernelhub: get GPU kernels from a Hub into a running program.
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "command.hpp"

namespace {

void print_usage(std::FILE* out) {
  std::fprintf(out,
               "usage: kernelhub [--help] [--version] <command> [args]\n\n"
               "Get prebuilt torch kernels from a Hugging Face Hub repo, verify them and load them.\n\n"
               "commands:\n");
  for (const auto& command : kernelhub::cli::commands()) {
    std::fprintf(out, "  %-10.*s %.*s\n", static_cast<int>(command.name.size()), command.name.data(),
                 static_cast<int>(command.summary.size()), command.summary.data());
  }
  std::fprintf(out, "\nRun `kernelhub <command> --help` for a command's options.\n");
}

}  // namespace

int main(int argc, char** argv) {
  using namespace kernelhub::cli;
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    print_usage(stderr);
    return kExitUsage;
  }
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    print_usage(stdout);
    return kExitOk;
  }
  if (args[0] == "--version") {
    std::printf("kernelhub %s\n", KERNELHUB_VERSION);
    return kExitOk;
  }
  for (const auto& command : commands()) {
    if (command.name == args[0]) {
      try {
        return command.run(std::span<const std::string>(args).subspan(1));
      } catch (const std::exception& e) {
        std::fprintf(stderr, "kernelhub %s: error: %s\n", args[0].c_str(), e.what());
        return kExitFailure;
      }
    }
  }
  std::fprintf(stderr, "kernelhub: unknown command `%s`; run `kernelhub --help` for the list\n", args[0].c_str());
  return kExitUsage;
}
