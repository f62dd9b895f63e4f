// kernelhub variants ORG/NAME|DIR [--all-versions | --version N|latest | --revision R]
// [--only-compatible] [--torch SPEC] [--python X.Y] [--json] [--native-only]: the variant decision trace for a
// Hub repo or a local kernel directory, best first, as get_kernel would decide it on this machine
// (KERNELHUB_* overrides describe another one), with the GPU fit applied when there are GPUs.
//
// For a repo, as `kernels variants` (kernels 0.19.1, cli/variants.py): the latest version unless
// --version, --revision or --all-versions says otherwise; --json prints kernels' object
// ({"repo_id", "revisions": [{"version", "revision", "variants": [{"variant", "compatible",
// "preferred", "reason"}]}]}) with the environment, each revision's commit and chosen variant and
// each decision's reason code added, and "closest" (the closest miss when none runs here, else
// null). DIR is a directory whose subdirectories are variants, or one whose build/ is; its --json
// is {"chosen", "environment", "decisions", "closest"}.
//
// Exit 0 when a variant was chosen (for a repo: in at least one revision listed), 4 when none fits
// (the trace is printed all the same), else the status of the failure's kind (cli_app.hpp; 2 for
// bad usage: a missing DIR, a KERNELHUB_* override that does not parse).
//
// Hidden --cases FILE (for the differential test): FILE is a JSON array of
// {"dir": DIR, "env": {"KERNELHUB_OS": ..., ...}, "loadable": {"libtorch", "python", "tvm_ffi"}};
// each case's overrides are applied to the machine this process detects, with no torch and no
// Python but those the case names (KERNELHUB_TORCH, KERNELHUB_CXX11_ABI, KERNELHUB_PYTHON,
// KERNELHUB_MLX, KERNELHUB_TVM_FFI, KERNELHUB_MACOS), and "loadable"
// (default: all true, a Python process) says what the process can load (resolver/loadable.hpp).
// One JSON array of --json answers, each with the "trace" as the `kernels` package prints it
// (resolver::format_trace), or {"error": message}, is printed. Exit 0 unless FILE cannot be read.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include "command.hpp"
#include "decision_json.hpp"
#include "environment_json.hpp"
#include "error_json.hpp"
#include "kernel_target.hpp"
#include "kernelhub/client/internal/hub_client.hpp"
#include "kernelhub/client/repo_id.hpp"
#include "kernelhub/fetch/internal/fetch.hpp"
#include "kernelhub/resolver/internal/closest_miss.hpp"
#include "kernelhub/resolver/select.hpp"
#include "selection_environment.hpp"

namespace kernelhub::cli {

namespace {

constexpr std::string_view kCommand = "kernelhub variants";

struct VariantsArguments {
  std::optional<std::string> target;  // ORG/NAME or DIR
  std::optional<std::string> revision;
  std::optional<std::string> version;  // N or "latest"
  bool all_versions = false;
  bool only_compatible = false;
  std::optional<std::string> cases;
  SelectionFlags selection;
  bool json = false;
  bool native_only = false;
};

// The accepted decisions alone, for --only-compatible.
std::vector<resolver::Decision> compatible(const std::vector<resolver::Decision>& decisions) {
  std::vector<resolver::Decision> out;
  for (const auto& d : decisions) {
    if (d.accepted()) out.push_back(d);
  }
  return out;
}

// The variant directory names under `dir` (or `dir/build`), sorted; none when `dir` is missing.
std::optional<std::vector<std::string>> candidate_names(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return std::nullopt;
  const std::filesystem::path root = std::filesystem::is_directory(dir / "build", ec) ? dir / "build" : dir;
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(root, ec)) {
    if (entry.is_directory(ec)) names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// When no variant runs here, the closest miss (resolver/closest_miss.hpp): {"variant", "codes" (each
// blocking check's reason code), "for_here" (the build to ask the publisher for, or null),
// "message"}; else null.
nlohmann::json closest_json(const std::vector<resolver::Decision>& decisions, const resolver::Environment& env,
                            const resolver::Loadable& loadable) {
  const auto miss = resolver::closest_miss(decisions, env, loadable);
  if (!miss) return nullptr;
  nlohmann::json codes = nlohmann::json::array();
  for (const auto& r : miss->blocking) codes.push_back(std::string(resolver::code_name(resolver::reason_code(r))));
  return {{"variant", miss->name},
          {"codes", std::move(codes)},
          {"for_here", miss->for_here ? nlohmann::json(miss->for_here->to_string()) : nlohmann::json(nullptr)},
          {"message", resolver::to_string(*miss)}};
}

// `shown`: the decisions to list (the compatible ones alone with --only-compatible); `all`: every
// decision, for the closest miss.
nlohmann::json to_json(const std::vector<resolver::Decision>& shown, const std::vector<resolver::Decision>& all,
                       const resolver::Environment& env, const resolver::Loadable& loadable) {
  nlohmann::json environment = environment_to_json(env);
  nlohmann::json list = nlohmann::json::array();
  for (const auto& d : shown) list.push_back(decision_to_json(d));
  const resolver::Decision* best = resolver::chosen(all);
  return {{"chosen", best ? nlohmann::json(best->name) : nlohmann::json(nullptr)},
          {"environment", std::move(environment)},
          {"decisions", std::move(list)},
          {"closest", closest_json(all, env, loadable)}};
}

void print_environment(const resolver::Environment& env) {
  const auto native = env.native_variant();
  std::string python;
  if (env.python) python = ", python " + env.python->to_string() + (env.python_free_threaded ? "t" : "");
  if (env.tvm_ffi) python += ", tvm-ffi " + env.tvm_ffi->to_string();
  if (env.mlx) python += ", mlx";
  std::printf("environment: %s %s, torch %s, backend %s%s%s\n", env.os.c_str(), env.cpu.c_str(),
              env.torch ? env.torch->to_string().c_str() : "none", env.backend.to_token().c_str(), python.c_str(),
              native ? (" (native variant " + native->to_string() + ")").c_str() : "");
  if (!env.backend_reason.empty()) std::printf("backend:     %s\n", env.backend_reason.c_str());
}

// The trace, one decision a line, then the choice, or the closest miss (`closest`, empty when there
// is none). `decisions` may be the compatible ones only.
void print_decisions(const std::string& where, const std::vector<resolver::Decision>& decisions, bool only_compatible,
                     const std::string& closest) {
  if (decisions.empty()) {
    std::printf("  %s\n", only_compatible ? "No compatible variants found." : "No build variants found.");
  }
  const std::string trace = resolver::format_trace(decisions);
  std::size_t start = 0;
  while (start < trace.size()) {
    const std::size_t end = trace.find('\n', start);
    std::printf("  %s\n", printable(trace.substr(start, end - start), Lines::kEscaped).c_str());
    start = end == std::string::npos ? trace.size() : end + 1;
  }
  const resolver::Decision* best = resolver::chosen(decisions);
  if (best) {
    std::printf("chosen: %s\n", printable(best->name, Lines::kEscaped).c_str());
  } else {
    std::printf("%s\n", printable("chosen: none; no variant in " + where + " runs here" +
                                      (closest.empty() ? "" : ": " + closest),
                                  Lines::kEscaped)
                            .c_str());
  }
}

// "the closest is ..." when no decision is accepted and one comes close; else empty.
std::string closest_text(const std::vector<resolver::Decision>& decisions, const resolver::Environment& env,
                         const resolver::Loadable& loadable) {
  const auto miss = resolver::closest_miss(decisions, env, loadable);
  return miss ? resolver::to_string(*miss) : std::string();
}

void print_trace(const std::string& dir, const std::vector<resolver::Decision>& decisions,
                 const resolver::Environment& env, const resolver::Loadable& loadable, bool only_compatible) {
  print_environment(env);
  std::printf("variants in %s, best first:\n", printable(dir, Lines::kEscaped).c_str());
  print_decisions(dir, only_compatible ? compatible(decisions) : decisions, only_compatible,
                  closest_text(decisions, env, loadable));
}

// DIR may be one variant's own folder (its metadata.json or _ops.py in it, no variant folder under
// it), as get_local_kernel accepts: then `resolved` becomes its decision alone, made among its
// siblings in the parent folder as for any local kernel, and a note says so. A folder whose name
// is no variant name cannot be judged (nothing says what it was built for): kInvalidArgument
// saying what to do. Anything else leaves `resolved` as it is.
Status variant_folder_decision(const std::filesystem::path& dir, VariantDecisions& resolved,
                               const FetchRequest& request, const FetchContext& ctx) {
  std::error_code ec;
  const bool any_variant = std::any_of(resolved.decisions.begin(), resolved.decisions.end(),
                                       [](const resolver::Decision& d) { return d.variant.has_value(); });
  if (any_variant ||
      !(std::filesystem::exists(dir / "metadata.json", ec) || std::filesystem::exists(dir / "_ops.py", ec))) {
    return {};
  }
  const std::filesystem::path folder = std::filesystem::absolute(dir, ec).lexically_normal();
  const std::string name = (folder.has_filename() ? folder : folder.parent_path()).filename().string();
  if (!resolver::Variant::parse(name)) {
    return unexpected(ErrorCode::kInvalidArgument,
                      "`" + dir.string() + "` is a variant's folder, but `" + name +
                          "` is no variant name, so nothing says what it was built for: name the folder as its "
                          "build (e.g. torch215-cxx11-cpu-x86_64-linux), or give the kernel folder holding build/");
  }
  FetchRequest parent = request;
  parent.source = (folder.has_filename() ? folder : folder.parent_path()).parent_path();
  KH_ASSIGN_OR_RETURN(VariantDecisions siblings, variant_decisions(parent, ctx));
  std::erase_if(siblings.decisions, [&](const resolver::Decision& d) { return d.name != name; });
  std::fprintf(stderr,
               "kernelhub variants: note: `%s` is a variant's folder: its own decision (`kernelhub variants %s` lists "
               "its siblings)\n",
               printable(dir.string(), Lines::kEscaped).c_str(),
               printable(std::get<std::filesystem::path>(parent.source).string(), Lines::kEscaped).c_str());
  resolved = std::move(siblings);
  return {};
}

// One revision of a repo to list: a version (branch vN) or a revision as given. `revision` is what
// kernels' --json says: the ref the Hub's refs listing names (`refs/heads/v1`), the ref's name
// where it came from the cache (offline: `v1`), else the revision as given.
struct Listed {
  std::optional<int> version;
  std::string revision;
};

// Which revisions of `repo` to list, as kernels' `variants` picks them: --revision as given, else
// --version N (which must exist), every version with --all-versions, else the latest version.
Result<std::vector<Listed>> revisions_to_list(const client::RepoId& repo, const VariantsArguments& args,
                                              const EnvironmentSource& env) {
  if (args.revision) return std::vector<Listed>{{std::nullopt, *args.revision}};
  KH_ASSIGN_OR_RETURN(client::Settings settings, client::Settings::from_env(env));
  const client::HubClient hub(std::move(settings));
  auto listed = hub.list_versions(repo, RepoType::kKernel);
  if (!listed && listed.error().code == ErrorCode::kOfflineMiss && args.version && *args.version != "latest") {
    // Offline, with no listing cached: the version asked for is resolved from the cache's refs
    // alone, and a miss is said as the kernels package says it.
    const int wanted = std::stoi(*args.version);
    return std::vector<Listed>{{wanted, "v" + std::to_string(wanted)}};
  }
  if (!listed) return unexpected(listed.error());
  const std::vector<std::string>& branches = *listed;
  const bool from_hub = !hub.settings().offline && hub.fallbacks().empty();
  std::vector<Listed> versions;
  for (const auto& branch : branches) {
    versions.push_back({std::stoi(branch.substr(1)), from_hub ? "refs/heads/" + branch : branch});
  }
  std::string available;
  for (const auto& v : versions) available += (available.empty() ? "" : ", ") + std::to_string(*v.version);
  if (args.version && *args.version != "latest") {
    const int wanted = std::stoi(*args.version);
    for (const auto& v : versions) {
      if (v.version == wanted) return std::vector<Listed>{v};
    }
    return unexpected(Error{ErrorCode::kNotFound,
                            "Version " + std::to_string(wanted) + " not found, available versions: " +
                                (available.empty() ? std::string("none") : available),
                            Missing::kVersion});
  }
  if (versions.empty()) {
    return unexpected(Error{ErrorCode::kNotFound,
                            "Repository does not support kernel versions: " + repo.to_string() +
                                " (it has no v<N> branch); give --revision R",
                            Missing::kVersion});
  }
  if (args.all_versions) return versions;
  return std::vector<Listed>{versions.back()};
}

// kernels' per-variant object, plus our reason code and, for a compatible CUDA variant whose GPU
// fit could not be checked, why not.
nlohmann::json variant_json(const resolver::Decision& decision, const resolver::Decision* best) {
  nlohmann::json out = {
      {"variant", decision.name},
      {"compatible", decision.accepted()},
      {"preferred", best != nullptr && best->name == decision.name},
      {"reason", decision.accepted() ? nlohmann::json(nullptr) : nlohmann::json(resolver::to_string(decision.reason))},
      {"code", std::string(resolver::code_name(resolver::reason_code(decision.reason)))}};
  const auto* compatible = std::get_if<resolver::reason::Compatible>(&decision.reason);
  if (compatible != nullptr && !compatible->fit_not_checked.empty()) {
    out["fit_not_checked"] = compatible->fit_not_checked;
  }
  return out;
}

int run_repo(const client::RepoId& repo, const VariantsArguments& args, const resolver::Environment& env,
             const EnvironmentSource& vars, const resolver::Loadable& loadable) {
  auto failed = [&](const Error& error) { return fail(kCommand, error, args.json); };
  auto listed = revisions_to_list(repo, args, vars);
  if (!listed) return failed(listed.error());
  const FetchContext context{env, vars};
  nlohmann::json revisions = nlohmann::json::array();
  nlohmann::json fallbacks = nlohmann::json::array();
  bool any_chosen = false;
  if (!args.json) print_environment(env);
  for (const Listed& item : *listed) {
    FetchRequest request;
    request.source = repo;
    request.loadable = loadable;
    if (item.version) {
      request.version = item.version;
    } else {
      request.revision = item.revision;
    }
    auto resolved = variant_decisions(request, context);
    if (!resolved) return failed(resolved.error());
    say_fallbacks(kCommand, resolved->fallbacks);
    for (const auto& note : resolved->fallbacks) fallbacks.push_back(note);
    const resolver::Decision* best = resolver::chosen(resolved->decisions);
    any_chosen = any_chosen || best != nullptr;
    const auto shown = args.only_compatible ? compatible(resolved->decisions) : resolved->decisions;
    if (args.json) {
      nlohmann::json variants = nlohmann::json::array();
      for (const auto& d : shown) variants.push_back(variant_json(d, best));
      revisions.push_back({{"version", item.version ? nlohmann::json(*item.version) : nlohmann::json(nullptr)},
                           {"revision", item.revision},
                           {"commit", resolved->commit},
                           {"chosen", best ? nlohmann::json(best->name) : nlohmann::json(nullptr)},
                           {"variants", std::move(variants)},
                           {"closest", closest_json(resolved->decisions, env, request.loadable)}});
      continue;
    }
    const std::string label = item.version ? "Version " + std::to_string(*item.version) : "Revision " + item.revision;
    std::printf("%s (commit %s):\n", printable(label, Lines::kEscaped).c_str(), resolved->commit.c_str());
    const std::string at = item.version ? "v" + std::to_string(*item.version) : item.revision;
    print_decisions(repo.to_string() + " at " + at, shown, args.only_compatible,
                    closest_text(resolved->decisions, env, request.loadable));
  }
  if (args.json) {
    const nlohmann::json out{{"repo_id", repo.to_string()},
                             {"environment", environment_to_json(env)},
                             {"revisions", std::move(revisions)},
                             {"fallbacks", std::move(fallbacks)}};
    std::printf("%s\n", out.dump(2).c_str());
  }
  return any_chosen ? kExitOk : kExitNoVariant;
}

resolver::Loadable loadable_of(const nlohmann::json& c) {
  resolver::Loadable loadable = resolver::Loadable::python_process();
  if (const auto found = c.find("loadable"); found != c.end() && found->is_object()) {
    loadable.libtorch = found->value("libtorch", true);
    loadable.python = found->value("python", true);
    loadable.tvm_ffi = found->value("tvm_ffi", true);
  }
  return loadable;
}

int run_cases(const std::string& file, const SelectionFlags& flags) {
  std::ifstream in(file);
  if (!in) {
    std::fprintf(stderr, "kernelhub variants: cannot read `%s`\n", file.c_str());
    return kExitUsage;
  }
  nlohmann::json cases = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!cases.is_array()) {
    std::fprintf(stderr, "kernelhub variants: `%s` is not a JSON array of cases\n", file.c_str());
    return kExitUsage;
  }
  // Each case names its torch, so the base needs none.
  auto detected = selection_environment(process_environment(), flags, WithoutTorch::kDescribe);
  if (!detected) throw std::runtime_error(detected.error().message);
  resolver::Environment base = std::move(detected->environment);
  // Each case names its own torch and Python: none unless it does.
  base.torch.reset();
  base.cxx11_abi.reset();
  base.set_python(std::nullopt);
  base.macos.reset();
  nlohmann::json answers = nlohmann::json::array();
  for (const auto& c : cases) {
    EnvironmentSource::Values vars;
    std::string unknown;
    if (const auto found = c.find("env"); found != c.end() && found->is_object()) {
      for (const auto& [key, value] : found->items()) {
        if (!find_environment_variable(key)) unknown = key;
        if (value.is_string()) vars[key] = value.get<std::string>();
      }
    }
    if (!unknown.empty()) {
      answers.push_back(
          {{"error", "`" + unknown + "` is not an environment variable kernelhub reads (docs/ENVIRONMENT.md)"}});
      continue;
    }
    resolver::Environment env = base;
    if (Status s = env.apply_overrides(map_environment(std::move(vars))); !s) {
      answers.push_back({{"error", s.error().message}});
      continue;
    }
    const auto names = candidate_names(c.value("dir", std::string()));
    if (!names) {
      answers.push_back({{"error", "not a directory: " + c.value("dir", std::string())}});
      continue;
    }
    const resolver::Loadable loadable = loadable_of(c);
    const auto decisions = resolver::select(*names, env, loadable);
    nlohmann::json answer = to_json(decisions, decisions, env, loadable);
    answer["trace"] = resolver::format_trace(decisions);
    answers.push_back(std::move(answer));
  }
  std::printf("%s\n", answers.dump().c_str());
  return kExitOk;
}

int run_variants(const VariantsArguments& args, const CLI::App& app) {
  if (args.cases && !args.target) {
    try {
      return run_cases(*args.cases, args.selection);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "kernelhub variants: %s\n", e.what());
      return kExitUsage;
    }
  }
  if (!args.target) return usage_error(app, "expected exactly one ORG/NAME or DIR");
  const std::string& target = *args.target;
  auto kernel = kernel_target(target, args.revision || args.version || args.all_versions);
  if (!kernel) return usage_error(app, kernel.error().message);
  if (args.version && *args.version != "latest" &&
      (args.version->empty() || args.version->size() > 9 ||
       args.version->find_first_not_of("0123456789") != std::string::npos)) {
    return usage_error(app, "--version: `" + *args.version + "` is not a whole number or `latest`");
  }
  auto detected = selection_environment(process_environment(), args.selection);
  if (!detected) return fail(kCommand, detected.error(), args.json);
  say_torch_free(kCommand, *detected);
  const resolver::Environment& env = detected->environment;
  const resolver::Loadable loadable = args.native_only ? resolver::Loadable::cpp_process() : detected->loadable;
  if (kernel->repo) return run_repo(*kernel->repo, args, env, detected->env, loadable);

  FetchRequest request;
  request.loadable = loadable;
  request.source = std::filesystem::path(target);
  auto resolved = variant_decisions(request, FetchContext{env, detected->env});
  if (!resolved) return fail(kCommand, resolved.error(), args.json);
  if (auto own = variant_folder_decision(target, *resolved, request, FetchContext{env, detected->env}); !own) {
    return fail(kCommand, own.error(), args.json);
  }
  say_fallbacks(kCommand, resolved->fallbacks);
  const auto& decisions = resolved->decisions;
  if (args.json) {
    std::printf("%s\n",
                to_json(args.only_compatible ? compatible(decisions) : decisions, decisions, env, request.loadable)
                    .dump(2)
                    .c_str());
  } else {
    print_trace(target, decisions, env, request.loadable, args.only_compatible);
  }
  return resolver::chosen(decisions) ? kExitOk : kExitNoVariant;
}

CommandRun define_variants(CLI::App& app) {
  auto args = std::make_shared<VariantsArguments>();
  app.description(
      "Show which build variant of a Hub kernel repo (or of the local kernel DIR) runs on this\n"
      "machine, and why each other variant does not, best first: for a repo, its latest version\n"
      "unless --version, --revision or --all-versions says otherwise. DIR holds the variant directories\n"
      "(or a build/ that does). With GPUs, CUDA variants are also checked against each GPU and the\n"
      "driver (metadata.json archs from the Hub; the fatbinary for a local DIR).\n"
      "The torch is that of --torch, KERNELHUB_TORCH or the Python environment (VIRTUAL_ENV, then\n"
      "python3 on PATH), read without importing it; with none, the builds are those kernelhub loads\n"
      "without torch (tvm-ffi), and a note says so. KERNELHUB_* variables describe another machine\n"
      "(see `kernelhub env --help`).");
  app.add_option("ORG/NAME|DIR", args->target, "a Hub kernel repo, or a local kernel directory");
  app.add_flag("--json", args->json,
               "print one JSON object. A repo: {\"repo_id\", \"environment\", \"revisions\": [{\"version\", "
               "\"revision\", \"commit\", \"chosen\", \"variants\": [{\"variant\", \"compatible\", \"preferred\", "
               "\"reason\", \"code\"}], \"closest\"}]}; a DIR: {\"chosen\", \"environment\", \"decisions\": "
               "[{\"variant\", \"accepted\", \"reason\", \"code\"}], \"closest\"} (code: a stable name for the "
               "reason, e.g. \"torch_version\", \"no_code_for_gpu\"; closest: when no variant runs here, the nearest "
               "{\"variant\", \"codes\", \"for_here\", \"message\"}, else null)");
  auto* all_versions =
      app.add_flag("--all-versions", args->all_versions, "every version of a Hub repo (default: the latest)");
  auto* version = app.add_option("--version", args->version, "a version of a Hub repo (branch vN), or `latest`")
                      ->option_text("N|latest");
  auto* revision = app.add_option("--revision", args->revision, "a Hub branch, tag or commit")->option_text("R");
  all_versions->excludes(version)->excludes(revision);
  version->excludes(revision);
  app.add_flag("--only-compatible", args->only_compatible, "only the variants that run here");
  add_selection_options(app, args->selection);
  app.add_flag("--native-only", args->native_only,
               "select as a C++ process with LibTorch does: reject what only a Python process can load (noarch, "
               "universal, sdk) and tvm-ffi builds");
  app.add_option("--cases", args->cases)->group("");  // the differential test's batch mode (see above)
  return [args, &app] { return run_variants(*args, app); };
}

}  // namespace

KERNELHUB_COMMAND("variants", "show which build variant of a kernel runs here, and why", &define_variants);

}  // namespace kernelhub::cli
