#include "selection_environment.hpp"

#include <cstdio>

#include "kernelhub/resolver/internal/torch_lookup.hpp"
#include "kernelhub/resolver/internal/torch_spec.hpp"
#if defined(KERNELHUB_WITH_TVM_FFI)
#include "kernelhub/internal/tvm_ffi_load.hpp"
#endif

namespace kernelhub::cli {

namespace {

// No torch here: what kernelhub itself loads without one (as `kernelhub get` does).
Result<SelectionEnvironment> torch_free_selection(SelectionEnvironment selection) {
  selection.loadable = resolver::Loadable::torch_free_process();
  const EnvironmentSource& env = selection.env;
#if defined(KERNELHUB_WITH_TVM_FFI)
  std::shared_ptr<const tvm_ffi_loader::Runtime> runtime;
  std::string which;
  if (auto named = env(env_vars::kKernelhubTvmFfi)) {
    which = "for TVM-FFI " + *named + " (KERNELHUB_TVM_FFI)";
  } else if (auto found = tvm_ffi_loader::Runtime::of_process(env)) {
    runtime = *found;
    which = "for the TVM-FFI " + runtime->version().to_string() + " runtime `" + runtime->location().path.string() +
            "` (" + runtime->location().found_by + ")";
  } else {
    which = "but there is no TVM-FFI runtime to load them with: " + found.error().message;
  }
  KH_ASSIGN_OR_RETURN(selection.environment, tvm_ffi::detect_environment(runtime.get(), env));
  selection.torch_free = "selecting the builds that load without torch, tvm-ffi builds, " + which;
#else
  selection.loadable.tvm_ffi = false;
  KH_ASSIGN_OR_RETURN(selection.environment, resolver::Environment::detect(resolver::TorchRuntime{}, env));
  selection.torch_free = "no build loads here without torch: this kernelhub was built without the TVM-FFI loader";
#endif
  return selection;
}

}  // namespace

void say_torch_free(std::string_view command, const SelectionEnvironment& selection) {
  if (selection.torch_free.empty()) return;
  // Why there is no torch (resolver/torch_lookup.hpp's words, without their advice: ours follows).
  std::string why = selection.torch_missing.substr(0, selection.torch_missing.find("; set KERNELHUB_TORCH"));
  constexpr std::string_view kLead = "no torch to select variants for: ";
  if (why.starts_with(kLead)) why.erase(0, kLead.size());
  std::fprintf(stderr, "%.*s: note: no torch here (%s): %s. Give --torch SPEC to select for a torch\n",
               static_cast<int>(command.size()), command.data(), why.c_str(), selection.torch_free.c_str());
}

void add_selection_options(CLI::App& app, SelectionFlags& flags) {
  app.add_option("--torch", flags.torch,
                 "the torch to select for: 2.9, or torch's full version as torch.__version__ prints it, e.g. "
                 "2.9.1+cu128 (default: KERNELHUB_TORCH, else the torch of VIRTUAL_ENV or of python3 on PATH, read "
                 "without importing it; with none, the builds kernelhub loads without torch: tvm-ffi builds)")
      ->option_text("SPEC");
  app.add_option("--python", flags.python,
                 "the Python to select for: 3.12, or 3.13t for a free-threaded build (default: KERNELHUB_PYTHON, "
                 "else the Python of the environment the torch was found in)")
      ->option_text("X.Y");
}

Result<SelectionEnvironment> selection_environment(const EnvironmentSource& env, const SelectionFlags& flags,
                                                   WithoutTorch without_torch) {
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
  } else if (found.error().code == ErrorCode::kNotFound) {
    selection.torch_missing = found.error().message;
    if (without_torch == WithoutTorch::kSelectTorchFree) return torch_free_selection(std::move(selection));
  } else {
    return unexpected(found.error());
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
