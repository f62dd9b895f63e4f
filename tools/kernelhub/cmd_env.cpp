// kernelhub env [--torch SPEC] [--json]: what this machine is, as variant selection sees it.
#include <cstdio>

#include "command.hpp"
#include "environment_json.hpp"
#include "selection_environment.hpp"

namespace kernelhub::cli {

namespace {

struct EnvArguments {
  SelectionFlags selection;
  bool json = false;
};

int run_env(const EnvArguments& args) {
  auto selection = selection_environment(args.selection, /*torch_required=*/false);
  if (!selection) return fail("kernelhub env", selection.error(), args.json);
  nlohmann::json j = environment_to_json(selection->environment);
  j["torch_source"] =
      selection->torch_source.empty() ? nlohmann::json(nullptr) : nlohmann::json(selection->torch_source);
  if (args.json) {
    std::printf("%s\n", j.dump(2).c_str());
    return kExitOk;
  }
  for (const auto& [key, value] : j.items()) {
    std::printf("%-15s %s\n", (key + ":").c_str(),
                value.is_string() ? value.get<std::string>().c_str() : value.dump().c_str());
  }
  // Not an error here (env describes the machine), but what the commands that select would say.
  if (!selection->torch_missing.empty()) {
    std::fflush(stdout);
    std::fprintf(stderr, "kernelhub env: %s\n", selection->torch_missing.c_str());
  }
  return kExitOk;
}

CommandRun define_env(CLI::App& app) {
  auto args = std::make_shared<EnvArguments>();
  app.description(
      "Show what this machine is, as variant selection sees it: os, cpu, glibc, torch version,\n"
      "C++ ABI, torch's CUDA version, CUDA driver version and GPUs. The torch is that of --torch,\n"
      "KERNELHUB_TORCH, or the Python environment (VIRTUAL_ENV, then python3 on PATH), read from its\n"
      "files without importing it; torch_source says which. The Python (version, free-threaded,\n"
      "MLX, tvm_ffi) is that of --python, KERNELHUB_PYTHON, or the environment the torch is in.\n"
      "KERNELHUB_* variables override each field (KERNELHUB_OS, KERNELHUB_CPU, KERNELHUB_TORCH,\n"
      "KERNELHUB_CXX11_ABI, KERNELHUB_BACKEND, KERNELHUB_CUDA_DRIVER, KERNELHUB_GPUS, KERNELHUB_PYTHON,\n"
      "KERNELHUB_TVM_FFI, KERNELHUB_MLX, KERNELHUB_MACOS; an empty KERNELHUB_GPUS, KERNELHUB_CUDA_DRIVER or\n"
      "KERNELHUB_TVM_FFI means none).");
  add_selection_options(app, args->selection);
  app.add_flag("--json", args->json, "print one JSON object");
  return [args] { return run_env(*args); };
}

}  // namespace

KERNELHUB_COMMAND("env", "show what this machine is, as variant selection sees it", &define_env);

}  // namespace kernelhub::cli
