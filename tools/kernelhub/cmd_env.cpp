// kernelhub env [--json]: what this machine is, as variant selection sees it.
#include <cstdio>

#include "command.hpp"
#include "environment_json.hpp"
#include "kernelhub/load.hpp"

namespace kernelhub::cli {

namespace {

int run_env(bool json) {
  auto environment = detect_environment();
  if (!environment) {
    std::fprintf(stderr, "kernelhub env: error: %s\n", environment.error().message.c_str());
    return kExitFailure;
  }
  const nlohmann::json j = environment_to_json(*environment);
  if (json) {
    std::printf("%s\n", j.dump(2).c_str());
    return kExitOk;
  }
  for (const auto& [key, value] : j.items()) {
    std::printf("%-15s %s\n", (key + ":").c_str(),
                value.is_string() ? value.get<std::string>().c_str() : value.dump().c_str());
  }
  return kExitOk;
}

CommandRun define_env(CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  app.description(
      "Show what this machine is, as variant selection sees it: os, cpu, glibc, torch version,\n"
      "C++ ABI, torch's CUDA version, CUDA driver version and GPUs. KERNELHUB_* variables override\n"
      "each field (KERNELHUB_OS, KERNELHUB_CPU, KERNELHUB_TORCH, KERNELHUB_CXX11_ABI,\n"
      "KERNELHUB_BACKEND, KERNELHUB_CUDA_DRIVER, KERNELHUB_GPUS, KERNELHUB_PYTHON).");
  app.add_flag("--json", *json, "print one JSON object");
  return [json] { return run_env(*json); };
}

}  // namespace

KERNELHUB_COMMAND("env", "show what this machine is, as variant selection sees it", &define_env);

}  // namespace kernelhub::cli
