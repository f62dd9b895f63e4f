// kernelhub get ORG/NAME [...]: in the torch-free `kernelhub`, with the tvm-ffi loader. Selects
// among the repo's torch and tvm-ffi builds as the kernels package ranks them (torch first), for the
// torch the torch-free commands see (KERNELHUB_TORCH, else the Python environment's, read from
// files) and the TVM-FFI runtime found here (tvm_ffi_loader/runtime.hpp). A tvm-ffi build is loaded
// in this process, which links no LibTorch, and its functions are listed; a torch build is handed
// to kernelhub-get (torch_commands.hpp), which fetches and loads it with LibTorch. Without
// kernelhub-get or a torch to select for, torch builds are out and the trace says so; without a
// TVM-FFI runtime, a torch build goes to kernelhub-get, and a tvm-ffi build that would run here
// fails with where the runtime was looked for and what to set.
#if defined(KERNELHUB_WITH_TVM_FFI)
#include <chrono>
#include <cstdio>
#include <string>

#include "command.hpp"
#include "decision_json.hpp"
#include "get_options.hpp"
#include "kernelhub/base/internal/process_io.hpp"
#include "kernelhub/internal/tvm_ffi_load.hpp"
#include "kernelhub/resolver/internal/closest_miss.hpp"
#include "kernelhub/resolver/select.hpp"
#include "selection_environment.hpp"
#include "sibling_executable.hpp"
#include "torch_commands.hpp"

namespace kernelhub::cli {

namespace {

// One line on stderr, the error as JSON with --json, and the exit status of its kind (cli_app.hpp).
int failed(const Error& error, bool json) {
  return fail("kernelhub get", error, json);
}

int hand_to_torch_executable() {
  return exec_sibling(kTorchExecutable, "get", remembered_arguments());
}

void print_kernel(const GetArguments& args, const tvm_ffi::Kernel& kernel, double ms,
                  std::optional<std::uint64_t> read_before) {
  if (args.json) {
    nlohmann::json functions = nlohmann::json::array();
    for (const auto& f : kernel.functions()) {
      nlohmann::json function = {{"name", f.name}};
      function["signature"] = f.signature ? nlohmann::json(f.signature->to_string(f.name)) : nlohmann::json();
      functions.push_back(std::move(function));
    }
    nlohmann::json decisions = nlohmann::json::array();
    for (const auto& d : kernel.decisions()) decisions.push_back(decision_to_json(d));
    nlohmann::json j = {{"repo", args.repo},
                        {"framework", "tvm-ffi"},
                        {"variant", kernel.variant()},
                        {"revision", kernel.revision()},
                        {"path", kernel.path().string()},
                        {"namespace", kernel.metadata().id},
                        {"library", kernel.library_path().string()},
                        {"functions", functions},
                        {"tvm_ffi",
                         {{"version", kernel.runtime_version()},
                          {"path", kernel.runtime_path().string()},
                          {"found_by", kernel.runtime_found_by()}}},
                        {"decisions", decisions},
                        {"warnings", kernel.warnings()}};
    j.update(load_statistics_json(kernel.timings(), ms, read_before));
    std::printf("%s\n", j.dump(2).c_str());
    return;
  }
  std::fputs(kernel_header_text(args.repo, kernel.variant() + " (tvm-ffi)", kernel.revision(), kernel.path()).c_str(),
             stdout);
  std::printf("tvm-ffi:   %s (%s, %s)\n", kernel.runtime_version().c_str(), kernel.runtime_path().c_str(),
              kernel.runtime_found_by().c_str());
  std::printf("functions:\n");
  for (const auto& f : kernel.functions()) {
    std::printf("  %s\n",
                printable(f.signature ? f.signature->to_string(f.name) : f.name + "(...)", Lines::kEscaped).c_str());
  }
  std::fputs(load_statistics_text(kernel.timings(), ms).c_str(), stdout);
}

// The build of `decisions` that would load here with a TVM-FFI runtime, if only a runtime were
// found; none when no tvm-ffi build runs here anyway.
const resolver::Decision* needs_only_a_runtime(const std::vector<resolver::Decision>& decisions,
                                               const resolver::Environment& environment,
                                               const resolver::Loadable& loadable) {
  for (const auto& d : decisions) {
    if (!d.variant || d.variant->framework != resolver::Framework::kTvmFfi) continue;
    resolver::Environment with_runtime = environment;
    with_runtime.tvm_ffi = d.variant->framework_version;
    resolver::Loadable with_loader = loadable;
    with_loader.tvm_ffi = true;
    if (resolver::is_accepted(resolver::check_variant(*d.variant, with_runtime, with_loader))) return &d;
  }
  return nullptr;
}

int run_get(const GetArguments& args) {
  const auto read_before = bytes_read_by_process();
  const auto start = std::chrono::steady_clock::now();
  const bool torch_executable = sibling_path(kTorchExecutable).has_value();
  auto selection = selection_environment(process_environment(), SelectionFlags{});
  if (!selection) return failed(selection.error(), args.json);
  const EnvironmentSource& env = selection->env;
  const bool has_torch = !selection->torch_source.empty();
  // Without a torch, the selection has looked for it already (a process keeps the one it opened).
  auto runtime = tvm_ffi_loader::Runtime::of_process(env);
  resolver::Environment environment = selection->environment;
  if (has_torch && runtime && !env(env_vars::kKernelhubTvmFfi)) {
    environment.tvm_ffi = (*runtime)->version().major_minor();
  }
  const GetKernelOptions options = get_kernel_options(args);
  auto chosen_backend = with_backend(std::move(environment), options.backend);
  if (!chosen_backend) return failed(chosen_backend.error(), args.json);
  auto request = tvm_ffi::fetch_request(args.repo, options, env);
  if (!request) return failed(request.error(), args.json);
  request->loadable =
      resolver::Loadable{.libtorch = torch_executable && has_torch, .python = false, .tvm_ffi = runtime.has_value()};

  // A download draws its progress line on a terminal, as `kernelhub download` does.
  client::ProgressReporter progress = client::ProgressReporter::for_terminal(args.json);
  const FetchContext ctx{*std::move(chosen_backend), env, nullptr, &progress};
  if (request->loadable.libtorch || !runtime) {
    // Decide before fetching (the revision, the listing; no file of the kernel): a torch build is
    // kernelhub-get's to trust, fetch, verify and load, so that its work and its counts are its own.
    // From the cache when it can answer, so that a warm get asks the Hub only in kernelhub-get (and
    // a Hub that is down costs one timeout, not one per process); else from the Hub.
    FetchRequest cached = *request;
    cached.offline = true;
    auto decisions = variant_decisions(cached, ctx);
    // Whatever the cache could not answer (nothing cached, or a cache another process is filling
    // right now), the Hub decides.
    if (!decisions && !request->offline) decisions = variant_decisions(*request, ctx);
    if (!decisions) return failed(decisions.error(), args.json);
    const resolver::Decision* best = resolver::chosen(decisions->decisions);
    if (best != nullptr && best->variant && best->variant->framework != resolver::Framework::kTvmFfi) {
      return hand_to_torch_executable();
    }
    if (!runtime) {
      // A tvm-ffi build would run here but for the runtime: where it was looked for, and what to set.
      if (const auto* build = needs_only_a_runtime(decisions->decisions, ctx.environment, request->loadable)) {
        return failed(runtime.error().with_context("`" + args.repo + "` (revision: " + decisions->revision +
                                                   ") has a build for this machine, `" + build->name +
                                                   "`, which kernelhub loads with a TVM-FFI runtime"),
                      args.json);
      }
      // Torch builds were out for want of a torch to select for here: kernelhub-get has its LibTorch.
      if (torch_executable && !has_torch) return hand_to_torch_executable();
      return failed(Error{ErrorCode::kNoCompatibleVariant,
                          resolver::no_variant_message("`" + args.repo + "` (revision: " + decisions->revision + ")",
                                                       decisions->decisions, ctx.environment, request->loadable)},
                    args.json);
    }
  }
  auto fetched = fetch_variant(*request, ctx);
  if (!fetched) {
    // Torch builds were out only for want of a torch to select for here: kernelhub-get has its
    // LibTorch, and decides with that.
    const bool torch_builds_left_out =
        fetched.error().message.find(resolver::to_string(resolver::reason::NoLibTorch{})) != std::string::npos;
    if (fetched.error().code == ErrorCode::kNoCompatibleVariant && torch_executable && !has_torch &&
        torch_builds_left_out) {
      return hand_to_torch_executable();
    }
    return failed(fetched.error(), args.json);
  }
  const auto variant = resolver::Variant::parse(fetched->variant);
  if (!variant || variant->framework != resolver::Framework::kTvmFfi) return hand_to_torch_executable();
  auto kernel = tvm_ffi::load_variant(*std::move(fetched), *std::move(runtime), env);
  if (!kernel) return failed(kernel.error(), args.json);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  print_kernel(args, *kernel, ms, read_before);
  return kExitOk;
}

CommandRun define_get(CLI::App& app) {
  auto args = std::make_shared<GetArguments>();
  add_get_options(app, *args);
  return [args] { return run_get(*args); };
}

}  // namespace

KERNELHUB_COMMAND("get", kGetSummary, &define_get);

}  // namespace kernelhub::cli
#endif
