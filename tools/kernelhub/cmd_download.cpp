// kernelhub download ORG/NAME [--revision R | --version N] [--variant V | --all-variants]
//                   [--torch SPEC] [--json] [--quiet]: fetch a kernel's build variant into the
// Hugging Face cache (verified, resumable, parallel) and print where it is, then the kernels it
// depends on (dependency_download.hpp). With --lockfile F, every kernel F pins (locked_download.hpp;
// `kernelhub lock` pins dependencies too). Without --variant or --all-variants, the variant for the
// torch of selection_environment.hpp.
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "checked_download.hpp"
#include "command.hpp"
#include "dependency_download.hpp"
#include "kernelhub/client/internal/hub_client.hpp"
#include "kernelhub/fetch/internal/lockfile.hpp"
#include "kernelhub/fetch/internal/resolve_commit.hpp"
#include "kernelhub/resolver/internal/closest_miss.hpp"
#include "kernelhub/resolver/select.hpp"
#include "kernelhub/signing/internal/signature_file.hpp"
#include "locked_download.hpp"
#include "selection_environment.hpp"

namespace kernelhub::cli {

namespace {

struct DownloadArguments {
  std::vector<std::string> repos;  // one, or with --lockfile those of the lock to fetch (none: all)
  std::optional<std::string> lockfile;
  std::optional<std::string> revision;
  std::optional<int> version;
  std::optional<std::string> variant;
  SelectionFlags selection;
  bool all_variants = false;
  bool all_files = false;
  bool force = false;
  bool json = false;
  bool quiet = false;
};

constexpr std::string_view kCommand = "kernelhub download";

// Why the machine selected for is not simply this one (a CUDA torch without a driver selects CPU
// variants; a torch named with --torch is the target's; no torch here selects tvm-ffi builds):
// said, so a cache prepared on a login node holds what its user meant.
void say_selection(const SelectionEnvironment& selection) {
  say_torch_free(kCommand, selection);
  if (selection.environment.backend_reason.empty()) return;
  std::fprintf(stderr, "%.*s: note: %s\n", static_cast<int>(kCommand.size()), kCommand.data(),
               selection.environment.backend_reason.c_str());
}

int run_locked(const DownloadArguments& args) {
  // What the user must fix first comes first: the lock file, then the torch to select for.
  if (auto readable = LockFile::read(*args.lockfile); !readable) return fail(kCommand, readable.error(), args.json);
  LockedDownload request{.lockfile = *args.lockfile,
                         .repos = args.repos,
                         .variant = args.variant,
                         .all_variants = args.all_variants,
                         .quiet = args.quiet || args.json,
                         .force = args.force};
  const EnvironmentSource env = process_environment();
  if (!args.variant && !args.all_variants) {
    auto selection = selection_environment(env, args.selection);
    if (!selection) return fail(kCommand, selection.error(), args.json);
    say_selection(*selection);
    request.environment = std::move(selection->environment);
    request.loadable = selection->loadable;
  }
  auto settings = client::Settings::from_env(env);
  if (!settings) return fail(kCommand, settings.error(), args.json);
  const auto started = std::chrono::steady_clock::now();
  const client::HubClient hub(*settings);
  auto done = download_locked(request, hub, env);
  say_fallbacks(kCommand, hub.fallbacks());
  if (!done) return fail(kCommand, done.error(), args.json);
  (*done)["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  (*done)["requests"] = hub.requests();
  (*done)["fallbacks"] = hub.fallbacks();
  if (args.json) {
    std::printf("%s\n", done->dump(2).c_str());
    return kExitOk;
  }
  for (const auto& kernel : (*done)["kernels"]) {
    for (const auto& path : kernel["paths"])
      std::printf("%s\n", printable(path.get<std::string>(), Lines::kEscaped).c_str());
  }
  return kExitOk;
}

int run_download(const DownloadArguments& args, const CLI::App& app) {
  if (args.lockfile) return run_locked(args);
  if (args.repos.size() != 1) return usage_error(app, "expected exactly one ORG/NAME (or --lockfile F)");
  const bool json = args.json;
  auto repo = client::RepoId::parse(args.repos[0]);
  if (!repo) return usage_error(app, repo.error().message);
  const std::string revision = args.version ? "v" + std::to_string(*args.version) : args.revision.value_or("main");
  const EnvironmentSource env = process_environment();
  // The torch to select for, before anything is asked of the Hub (none: what kernelhub loads
  // without torch, and a note says so).
  std::optional<SelectionEnvironment> selection;
  if (!args.all_files && !args.variant && !args.all_variants) {
    auto found = selection_environment(env, args.selection);
    if (!found) return fail(kCommand, found.error(), json);
    say_selection(*found);
    selection = std::move(*found);
  }
  auto settings = client::Settings::from_env(env);
  if (!settings) return fail(kCommand, settings.error(), json);
  const client::HubClient hub(*settings);
  const auto started = std::chrono::steady_clock::now();
  const auto type = RepoType::kKernel;
  auto failed = [&](const Error& error) {
    say_fallbacks(kCommand, hub.fallbacks());
    return fail(kCommand, error, json);
  };

  // Resolved as `get` resolves it, so that a version the repo lacks is said the same way.
  FetchRequest asked;
  if (args.version) {
    asked.version = args.version;
  } else {
    asked.revision = revision;
  }
  auto commit = resolve_commit(hub, *repo, asked);
  if (!commit) return failed(commit.error());
  std::vector<std::string> variants;
  if (args.all_files) {
    // Leaves `variants` empty: one download of every file below.
  } else if (args.variant) {
    variants.push_back(*args.variant);
  } else {
    auto names = hub.list_variants(*repo, type, *commit);
    if (!names) return failed(names.error());
    if (args.all_variants) {
      variants = *names;
    } else {
      const auto decisions = resolver::select(*names, selection->environment, selection->loadable);
      const resolver::Decision* best = resolver::chosen(decisions);
      if (!best) {
        return failed(Error{ErrorCode::kNoCompatibleVariant,
                            resolver::no_variant_message("`" + repo->to_string() + "` at revision `" + revision + "`",
                                                         decisions, selection->environment, selection->loadable)});
      }
      variants.push_back(best->name);
    }
  }
  client::DownloadOptions options;
  options.quiet = args.quiet || json;
  options.asked_revision = revision;
  options.force = args.force;
  nlohmann::json files = nlohmann::json::array();
  nlohmann::json repaired = nlohmann::json::array();
  std::uint64_t bytes = 0, downloaded = 0, resumed = 0;
  std::vector<std::string> paths;
  const std::vector<std::string> whole_repo{""};
  for (const std::string& variant : variants.empty() ? whole_repo : variants) {
    options.with_files = {signing::signature_repo_path(variant)};  // a later get checks it
    auto snapshot = checked_download(hub, *repo, *commit, variant, options, env);
    if (!snapshot) return failed(snapshot.error());
    say_repaired(kCommand, *snapshot);
    for (const auto& f : snapshot->files) files.push_back(f);
    for (auto& r : repaired_json(*snapshot)) repaired.push_back(std::move(r));
    bytes += snapshot->bytes;
    downloaded += snapshot->downloaded_bytes;
    resumed += snapshot->resumed_bytes;
    paths.push_back(snapshot->path.string());
  }
  // The kernels it depends on: every variant of each when every variant (or file) was asked for.
  auto needed = dependencies_of(std::vector<std::filesystem::path>(paths.begin(), paths.end()));
  if (!needed) return failed(needed.error());
  nlohmann::json dependencies = nlohmann::json::array();
  if (!needed->empty()) {
    DependencyDownload request{args.all_files      ? DependencyVariants::kWholeRepo
                               : args.all_variants ? DependencyVariants::kAll
                                                   : DependencyVariants::kSelected,
                               selection ? std::optional(selection->environment) : std::nullopt, options.quiet};
    if (selection) request.loadable = selection->loadable;
    if (request.variants == DependencyVariants::kSelected && !request.environment) {  // --variant V
      auto found = selection_environment(env, args.selection);
      if (!found) {
        return failed(found.error().with_context("`" + repo->to_string() +
                                                 "` depends on other kernels, whose variants are chosen for a torch"));
      }
      say_selection(*found);
      request.environment = found->environment;
      request.loadable = found->loadable;
    }
    const KernelDependency asked{repo->to_string(), args.version,
                                 args.version ? std::nullopt : std::optional<std::string>(revision)};
    auto fetched = download_dependencies(asked, *needed, request, hub);
    if (!fetched) return failed(fetched.error());
    dependencies = std::move(*fetched);
  }
  say_fallbacks(kCommand, hub.fallbacks());
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (json) {
    nlohmann::json j = {{"repo", repo->to_string()},
                        {"revision", revision},
                        {"commit", *commit},
                        {"variants", variants},
                        {"path", paths.size() == 1 ? nlohmann::json(paths[0]) : nlohmann::json(paths)},
                        {"files", files},
                        {"bytes", bytes},
                        {"downloaded_bytes", downloaded},
                        {"resumed_bytes", resumed},
                        {"repaired", repaired},
                        {"requests", hub.requests()},
                        {"fallbacks", hub.fallbacks()},
                        {"dependencies", dependencies},
                        {"seconds", seconds}};
    std::printf("%s\n", j.dump(2).c_str());
    return kExitOk;
  }
  for (const auto& p : paths) std::printf("%s\n", printable(p, Lines::kEscaped).c_str());
  for (const auto& dependency : dependencies) {
    for (const auto& p : dependency["paths"])
      std::printf("%s\n", printable(p.get<std::string>(), Lines::kEscaped).c_str());
  }
  return kExitOk;
}

CommandRun define_download(CLI::App& app) {
  auto args = std::make_shared<DownloadArguments>();
  app.description(
      "Download a kernel's build variant into the Hugging Face cache and print its local path,\n"
      "then those of the kernels it depends on (metadata.json kernel-depends, recursively).\n"
      "Without --variant, the variant for this machine is chosen as `kernelhub get` would, for the\n"
      "torch of --torch, KERNELHUB_TORCH or the Python environment (VIRTUAL_ENV, python3 on PATH);\n"
      "with no torch, among the builds kernelhub loads without one (tvm-ffi), and a note says so.\n"
      "Every file is verified (sha256 / git sha1) before it becomes visible, and every file already\n"
      "cached is checked again: one that changed in the cache is downloaded again (--force: all of\n"
      "them). A download cut short continues where it stopped. When the Hub cannot be reached, what\n"
      "the cache holds is used and said. Honours HF_HOME, HF_HUB_CACHE, KERNELS_CACHE, HF_ENDPOINT,\n"
      "HF_TOKEN and HF_HUB_OFFLINE.");
  app.add_option("ORG/NAME", args->repos, "the kernel repo; with --lockfile, the locked ones to fetch (default: all)");
  auto* revision =
      app.add_option("--revision", args->revision, "branch, tag or commit (default: main)")->option_text("R");
  auto* version = app.add_option("--version", args->version, "major version (branch vN)")
                      ->option_text("N")
                      ->transform(whole_number());
  revision->excludes(version);
  auto* variant = app.add_option("--variant", args->variant, "a build variant, e.g. torch210-cxx11-cu128-x86_64-linux")
                      ->option_text("V");
  auto* all_variants = app.add_flag("--all-variants", args->all_variants, "every variant under build/");
  auto* all_files = app.add_flag("--all-files", args->all_files,
                                 "the whole repo at that revision (what `kernels` needs to load offline)");
  variant->excludes(all_variants)->excludes(all_files);
  all_variants->excludes(all_files);
  app.add_option("--lockfile", args->lockfile,
                 "every kernel F pins (or those named), at its locked commit, checked against the lock's hashes: "
                 "fills a cache for nodes that load offline")
      ->option_text("F")
      ->excludes(revision)
      ->excludes(version)
      ->excludes(all_files);
  add_selection_options(app, args->selection);
  app.add_flag("--force", args->force, "download every file asked for again, even when it is cached and intact");
  app.add_flag("--json", args->json,
               "print one JSON object: path, commit, variants, files, bytes, downloaded_bytes, resumed_bytes, "
               "repaired, requests, fallbacks, dependencies (each kernel it depends on: repo, revision, commit, "
               "variants, paths, needed_by), seconds (on failure: {\"error\": {\"code\", \"message\"}})");
  app.add_flag("--quiet", args->quiet, "no progress line");
  return [args, &app] { return run_download(*args, app); };
}

}  // namespace

KERNELHUB_COMMAND("download", "download a kernel variant into the Hugging Face cache and print its path",
                  &define_download);

}  // namespace kernelhub::cli
