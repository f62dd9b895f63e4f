// kernelhub env [--json]: what this machine is, as variant selection sees it.
#include <cstdio>

#include "arguments.hpp"
#include "command.hpp"
#include "environment_json.hpp"
#include "kernelhub/load.hpp"

namespace kernelhub::cli {

namespace {

constexpr const char* kHelp =
    "usage: kernelhub env [--json]\n\n"
    "Show what this machine is, as variant selection sees it: os, cpu, glibc, torch version,\n"
    "C++ ABI, torch's CUDA version, CUDA driver version and GPUs. KERNELHUB_* variables override\n"
    "each field (KERNELHUB_OS, KERNELHUB_CPU, KERNELHUB_TORCH, KERNELHUB_CXX11_ABI,\n"
    "KERNELHUB_BACKEND, KERNELHUB_CUDA_DRIVER, KERNELHUB_GPUS, KERNELHUB_PYTHON).\n\n"
    "options:\n  --json    print one JSON object\n";

int run_env(std::span<const std::string> args) {
  const Arguments parsed = parse_arguments(args, {.flags = {"--json"}});
  if (!parsed.error.empty() || !parsed.positionals.empty()) {
    std::fprintf(stderr, "kernelhub env: %s\n%s", parsed.error.empty() ? "unexpected argument" : parsed.error.c_str(),
                 kHelp);
    return kExitUsage;
  }
  if (parsed.has("--help")) {
    std::fputs(kHelp, stdout);
    return kExitOk;
  }
  auto environment = detect_environment();
  if (!environment) {
    std::fprintf(stderr, "kernelhub env: error: %s\n", environment.error().message.c_str());
    return kExitFailure;
  }
  const nlohmann::json j = environment_to_json(*environment);
  if (parsed.has("--json")) {
    std::printf("%s\n", j.dump(2).c_str());
    return kExitOk;
  }
  for (const auto& [key, value] : j.items()) {
    std::printf("%-15s %s\n", (key + ":").c_str(), value.is_string() ? value.get<std::string>().c_str() : value.dump().c_str());
  }
  return kExitOk;
}

}  // namespace

KERNELHUB_COMMAND("env", "show what this machine is, as variant selection sees it", &run_env);

}  // namespace kernelhub::cli
