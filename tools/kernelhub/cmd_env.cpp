// kernelhub env [--torch SPEC] [--json]: what this machine is, as variant selection sees it.
// kernelhub env --variables [--json | --markdown]: every environment variable kernelhub reads
// (base/environment_variables.hpp), with its value here; --markdown prints docs/ENVIRONMENT.md.
#include <cstdio>
#include <string>

#include "command.hpp"
#include "environment_json.hpp"
#include "selection_environment.hpp"

namespace kernelhub::cli {

namespace {

struct EnvArguments {
  SelectionFlags selection;
  bool json = false;
  bool variables = false;
  bool markdown = false;
};

// docs/ENVIRONMENT.md: the table, for people; a test keeps the file equal to this output.
void print_variables_markdown() {
  std::printf(
      "# Environment variables\n"
      "\n"
      "Every environment variable kernelhub reads: the C++ library, the `kernelhub` CLI, `hub-publish`\n"
      "and the Python package. This file is printed by `kernelhub env --variables --markdown` from the\n"
      "table in `base/src/environment_variables.cpp`, and a test fails when the two differ; change the\n"
      "table, then run `build/bin/kernelhub env --variables --markdown > docs/ENVIRONMENT.md`.\n"
      "\n"
      "Each entry point (a `get_kernel` call, a CLI command, a call into the Python package) reads\n"
      "them once, when it starts, and passes the values down (`base/environment_source.hpp`); a\n"
      "variable set later is seen by the next call. An empty value counts as unset. Truthy means 1,\n"
      "ON, YES or TRUE, in any case, as in huggingface_hub. `kernelhub env --variables` shows which\n"
      "are set here (tokens masked).\n"
      "\n"
      "| variable | meaning | default | read by |\n"
      "|---|---|---|---|\n");
  for (const EnvironmentVariable& v : environment_variables()) {
    std::printf("| `%.*s` | %.*s | %.*s | %.*s |\n", static_cast<int>(v.name.size()), v.name.data(),
                static_cast<int>(v.meaning.size()), v.meaning.data(), static_cast<int>(v.default_value.size()),
                v.default_value.data(), static_cast<int>(v.read_by.size()), v.read_by.data());
  }
}

// The value to show: a secret only says it is set.
std::optional<std::string> shown_value(const EnvironmentVariable& variable, const EnvironmentSource& env) {
  auto value = env(variable.name);
  if (value && variable.secret) return "(set, not shown)";
  return value;
}

int run_variables(const EnvArguments& args) {
  if (args.markdown) {
    print_variables_markdown();
    return kExitOk;
  }
  const EnvironmentSource env = process_environment();
  if (args.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const EnvironmentVariable& v : environment_variables()) {
      const auto value = shown_value(v, env);
      out.push_back({{"name", v.name},
                     {"meaning", v.meaning},
                     {"default", v.default_value},
                     {"read_by", v.read_by},
                     {"secret", v.secret},
                     {"value", value ? nlohmann::json(*value) : nlohmann::json(nullptr)}});
    }
    std::printf("%s\n", out.dump(2).c_str());
    return kExitOk;
  }
  for (const EnvironmentVariable& v : environment_variables()) {
    const auto value = shown_value(v, env);
    const std::string shown = value ? "=" + *value : " unset: " + std::string(v.default_value);
    std::printf("%.*s%s\n", static_cast<int>(v.name.size()), v.name.data(), shown.c_str());
  }
  return kExitOk;
}

int run_env(const EnvArguments& args) {
  if (args.variables) return run_variables(args);
  auto selection = selection_environment(process_environment(), args.selection, WithoutTorch::kDescribe);
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
      "KERNELHUB_TVM_FFI means none).\n"
      "--variables lists every environment variable kernelhub reads (docs/ENVIRONMENT.md).");
  add_selection_options(app, args->selection);
  app.add_flag("--json", args->json, "print one JSON object (with --variables: an array, one object a variable)");
  auto* variables = app.add_flag("--variables", args->variables,
                                 "list every environment variable kernelhub reads, with its value here (tokens "
                                 "masked) or, unset, its default");
  app.add_flag("--markdown", args->markdown, "with --variables: the table as docs/ENVIRONMENT.md has it")
      ->needs(variables);
  return [args] { return run_env(*args); };
}

}  // namespace

KERNELHUB_COMMAND("env", "show what this machine is, as variant selection sees it", &define_env);

}  // namespace kernelhub::cli
