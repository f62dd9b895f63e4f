// kernelhub variants ORG/NAME|DIR [--revision R | --version N] [--torch SPEC] [--json]
// [--native-only]: the variant decision trace for a Hub repo or a local kernel directory, best
// first, as get_kernel would decide it on this machine (KERNELHUB_* overrides describe another
// one), with the GPU fit applied when there are GPUs.
//
// DIR is a directory whose subdirectories are variants, or one whose build/ is. Exit 0 when a
// variant was chosen, 4 when none fits (the trace is printed all the same), else the status of the
// failure's kind (cli_app.hpp; 2 for bad usage: a missing DIR, a KERNELHUB_* override that does not
// parse, no torch to select for).
//
// Hidden --cases FILE (for the differential test): FILE is a JSON array of
// {"dir": DIR, "env": {"KERNELHUB_OS": ..., ...}, "native_only": bool}; each case's overrides are
// applied to the environment this process detects, and one JSON array of --json answers (or
// {"error": message}) is printed. Exit 0 unless FILE cannot be read.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include "command.hpp"
#include "decision_json.hpp"
#include "environment_json.hpp"
#include "kernelhub/client/repo_id.hpp"
#include "kernelhub/fetch.hpp"
#include "kernelhub/resolver/select.hpp"
#include "selection_environment.hpp"

namespace kernelhub::cli {

namespace {

struct VariantsArguments {
  std::optional<std::string> target;  // ORG/NAME or DIR
  std::optional<std::string> revision;
  std::optional<int> version;
  std::optional<std::string> cases;
  std::optional<std::string> torch;
  bool json = false;
  bool native_only = false;
};

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

nlohmann::json to_json(const std::vector<resolver::Decision>& decisions, const resolver::Environment& env) {
  nlohmann::json environment = environment_to_json(env);
  environment["python_free_threaded"] = env.python_free_threaded;
  environment["tvm_ffi"] = env.tvm_ffi ? nlohmann::json(env.tvm_ffi->to_string()) : nlohmann::json(nullptr);
  nlohmann::json list = nlohmann::json::array();
  for (const auto& d : decisions) list.push_back(decision_to_json(d));
  const resolver::Decision* best = resolver::chosen(decisions);
  return {{"chosen", best ? nlohmann::json(best->name) : nlohmann::json(nullptr)},
          {"environment", std::move(environment)},
          {"decisions", std::move(list)}};
}

void print_trace(const std::string& dir, const std::vector<resolver::Decision>& decisions,
                 const resolver::Environment& env) {
  const auto native = env.native_variant();
  std::printf("environment: %s %s, torch %s, backend %s%s%s\n", env.os.c_str(), env.cpu.c_str(),
              env.torch ? env.torch->to_string().c_str() : "none", env.backend.to_token().c_str(),
              env.python ? (", python " + env.python->to_string() + (env.python_free_threaded ? "t" : "")).c_str() : "",
              native ? (" (native variant " + native->to_string() + ")").c_str() : "");
  if (!env.backend_reason.empty()) std::printf("backend:     %s\n", env.backend_reason.c_str());
  std::printf("variants in %s, best first:\n", dir.c_str());
  const std::string trace = resolver::format_trace(decisions);
  std::size_t start = 0;
  while (start < trace.size()) {
    const std::size_t end = trace.find('\n', start);
    std::printf("  %s\n", trace.substr(start, end - start).c_str());
    start = end == std::string::npos ? trace.size() : end + 1;
  }
  const resolver::Decision* best = resolver::chosen(decisions);
  if (best) {
    std::printf("chosen: %s\n", best->name.c_str());
  } else {
    std::printf("chosen: none; no variant in %s runs here\n", dir.c_str());
  }
}

int run_cases(const std::string& file, const std::optional<std::string>& torch) {
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
  auto detected = selection_environment(torch, /*torch_required=*/false);
  if (!detected) throw std::runtime_error(detected.error().message);
  const resolver::Environment base = std::move(detected->environment);
  nlohmann::json answers = nlohmann::json::array();
  for (const auto& c : cases) {
    std::map<std::string, std::string, std::less<>> vars;
    if (const auto found = c.find("env"); found != c.end() && found->is_object()) {
      for (const auto& [key, value] : found->items()) {
        if (value.is_string()) vars[key] = value.get<std::string>();
      }
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
    const auto decisions = resolver::select(*names, env, {.native_only = c.value("native_only", false)});
    answers.push_back(to_json(decisions, env));
  }
  std::printf("%s\n", answers.dump().c_str());
  return kExitOk;
}

int run_variants(const VariantsArguments& args, const CLI::App& app) {
  if (args.cases && !args.target) {
    try {
      return run_cases(*args.cases, args.torch);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "kernelhub variants: %s\n", e.what());
      return kExitUsage;
    }
  }
  constexpr std::string_view kCommand = "kernelhub variants";
  if (!args.target) return usage_error(app, "expected exactly one ORG/NAME or DIR");
  const std::string& target = *args.target;
  std::error_code ec;
  const bool is_dir = std::filesystem::is_directory(target, ec);
  auto repo = client::RepoId::parse(target);
  if (!is_dir && !repo) {
    return usage_error(app, "`" + target + "` is neither a directory nor a repo id (" + repo.error().message + ")");
  }
  auto detected = selection_environment(args.torch);
  if (!detected) return fail(kCommand, detected.error(), args.json);
  const resolver::Environment& env = detected->environment;
  const FetchContext context{env, detected->env};
  FetchRequest request;
  request.native_only = args.native_only;
  if (is_dir) {
    request.source = std::filesystem::path(target);
  } else {
    request.source = *repo;
    request.revision = args.revision;
    request.version = args.version;
  }
  Result<VariantDecisions> resolved = variant_decisions(request, context);
  if (!resolved) return fail(kCommand, resolved.error(), args.json);
  say_fallbacks(kCommand, resolved->fallbacks);
  const auto& decisions = resolved->decisions;
  const std::string& dir = target;
  if (args.json) {
    nlohmann::json out = to_json(decisions, env);
    out["fallbacks"] = resolved->fallbacks;
    std::printf("%s\n", out.dump(2).c_str());
  } else {
    print_trace(dir, decisions, env);
  }
  return resolver::chosen(decisions) ? kExitOk : kExitNoVariant;
}

CommandRun define_variants(CLI::App& app) {
  auto args = std::make_shared<VariantsArguments>();
  app.description(
      "Show which build variant of a Hub kernel repo (or of the local kernel DIR) runs on this\n"
      "machine, and why each other variant does not, best first. DIR holds the variant directories\n"
      "(or a build/ that does). With GPUs, CUDA variants are also checked against each GPU and the\n"
      "driver (metadata.json archs from the Hub; the fatbinary for a local DIR).\n"
      "The torch is that of --torch, KERNELHUB_TORCH or the Python environment (VIRTUAL_ENV, then\n"
      "python3 on PATH), read without importing it. KERNELHUB_* variables describe another machine\n"
      "(see `kernelhub env --help`).");
  app.add_option("ORG/NAME|DIR", args->target, "a Hub kernel repo, or a local kernel directory");
  app.add_flag("--json", args->json,
               "print one JSON object: {\"chosen\", \"environment\", \"decisions\"}, each decision {\"variant\", "
               "\"accepted\", \"reason\", \"code\"} (code: a stable name for the reason, e.g. \"torch_version\", "
               "\"no_code_for_gpu\")");
  app.add_option("--revision", args->revision, "Hub branch, tag or commit")->option_text("R");
  app.add_option("--version", args->version, "Hub major version (branch vN)")
      ->option_text("N")
      ->transform(whole_number());
  add_torch_option(app, args->torch);
  app.add_flag("--native-only", args->native_only,
               "reject what only a Python process can load (noarch, universal, tvm-ffi)");
  app.add_option("--cases", args->cases)->group("");  // the differential test's batch mode (see above)
  return [args, &app] { return run_variants(*args, app); };
}

}  // namespace

KERNELHUB_COMMAND("variants", "show which build variant of a local kernel runs here, and why", &define_variants);

}  // namespace kernelhub::cli
