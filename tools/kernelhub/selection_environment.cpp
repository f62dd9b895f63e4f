#include "selection_environment.hpp"

#include "kernelhub/resolver/torch_lookup.hpp"
#include "kernelhub/resolver/torch_spec.hpp"

namespace kernelhub::cli {

void add_selection_options(CLI::App& app, SelectionFlags& flags) {
  app.add_option("--torch", flags.torch,
                 "the torch to select for: 2.9, or torch's full version as torch.__version__ prints it, e.g. "
                 "2.9.1+cu128 (default: KERNELHUB_TORCH, else the torch of VIRTUAL_ENV or of python3 on PATH, read "
                 "without importing it)")
      ->option_text("SPEC");
  app.add_option("--python", flags.python,
                 "the Python to select for: 3.12, or 3.13t for a free-threaded build (default: KERNELHUB_PYTHON, "
                 "else the Python of the environment the torch was found in)")
      ->option_text("X.Y");
}

Result<SelectionEnvironment> selection_environment(const EnvironmentSource& env, const SelectionFlags& flags,
                                                   bool torch_required) {
  SelectionEnvironment selection;
  selection.env = env;
  if (flags.torch) {
    if (auto spec = resolver::TorchSpec::parse(*flags.torch); !spec) {
      return unexpected(spec.error().with_context("--torch"));
    }
  }
  if (flags.torch) selection.env = selection.env.with(env_vars::kKernelhubTorch, *flags.torch);
  if (flags.python) selection.env = selection.env.with(env_vars::kKernelhubPython, *flags.python);
  resolver::TorchRuntime runtime;
  std::optional<resolver::PythonRuntime> python;
  auto found = resolver::find_torch(selection.env);
  if (found) {
    runtime = found->runtime;
    python = found->python;
    selection.torch_source = flags.torch ? "--torch" : found->source;
  } else if (found.error().code == ErrorCode::kNotFound && !torch_required) {
    selection.torch_missing = found.error().message;
  } else {
    Error error = found.error();
    if (error.code == ErrorCode::kNotFound) {
      // Not a missing file of the user's: a missing input of the command, which says what to give.
      error.code = ErrorCode::kInvalidArgument;
      error.message += " (or give --torch SPEC, for this command only)";
    }
    return unexpected(std::move(error));
  }
  auto environment = resolver::Environment::detect(runtime, selection.env, python);
  if (!environment) {
    Error error = environment.error();
    if (flags.python && error.message.starts_with("KERNELHUB_PYTHON=")) error.message.replace(0, 16, "--python");
    return unexpected(std::move(error));
  }
  selection.environment = *std::move(environment);
  return selection;
}

}  // namespace kernelhub::cli
