#include "selection_environment.hpp"

#include "kernelhub/resolver/torch_lookup.hpp"
#include "kernelhub/resolver/torch_spec.hpp"

namespace kernelhub::cli {

void add_torch_option(CLI::App& app, std::optional<std::string>& torch) {
  app.add_option("--torch", torch,
                 "the torch to select for: 2.9, or torch's full version as torch.__version__ prints it, e.g. "
                 "2.9.1+cu128 (default: KERNELHUB_TORCH, else the torch of VIRTUAL_ENV or of python3 on PATH, read "
                 "without importing it)")
      ->option_text("SPEC");
}

Result<SelectionEnvironment> selection_environment(const std::optional<std::string>& torch, bool torch_required) {
  SelectionEnvironment selection;
  selection.env = process_environment();
  if (torch) {
    if (auto spec = resolver::TorchSpec::parse(*torch); !spec) return unexpected(spec.error().with_context("--torch"));
    selection.env = [flag = *torch, process = selection.env](std::string_view name) -> std::optional<std::string> {
      if (name == "KERNELHUB_TORCH") return flag;
      return process(name);
    };
  }
  resolver::TorchRuntime runtime;
  auto found = resolver::find_torch(selection.env);
  if (found) {
    runtime = found->runtime;
    selection.torch_source = torch ? "--torch" : found->source;
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
  KH_ASSIGN_OR_RETURN(selection.environment, resolver::Environment::detect(runtime, selection.env));
  return selection;
}

}  // namespace kernelhub::cli
