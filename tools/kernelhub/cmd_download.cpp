// kernelhub download ORG/NAME [--revision R | --version N] [--variant V | --all-variants]
//                   [--json] [--quiet]: fetch a kernel's build variant into the Hugging Face
// cache (verified, resumable, parallel) and print where it is.
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "arguments.hpp"
#include "command.hpp"
#include "error_json.hpp"
#include "kernelhub/client/hub_client.hpp"
#include "kernelhub/kernelhub.hpp"
#include "kernelhub/resolver/select.hpp"

namespace kernelhub::cli {

namespace {

constexpr const char* kHelp =
    "usage: kernelhub download ORG/NAME [--revision R | --version N] [--variant V | --all-variants |\n"
    "                          --all-files] [--json] [--quiet]\n\n"
    "Download a kernel's build variant into the Hugging Face cache and print its local path.\n"
    "Without --variant, the variant for this machine is chosen as `kernelhub get` would.\n"
    "Every file is verified (sha256 / git sha1) before it becomes visible. Honours HF_HOME,\n"
    "HF_HUB_CACHE, KERNELS_CACHE, HF_ENDPOINT, HF_TOKEN and HF_HUB_OFFLINE.\n\n"
    "options:\n"
    "  --revision R     branch, tag or commit (default: main)\n"
    "  --version N      major version (branch vN)\n"
    "  --variant V      a build variant, e.g. torch210-cxx11-cu128-x86_64-linux\n"
    "  --all-variants   every variant under build/\n"
    "  --all-files      the whole repo at that revision (what `kernels` needs to load offline)\n"
    "  --json           print one JSON object: path, commit, variants, files, bytes, requests, seconds\n"
    "  --quiet          no progress line\n";

int fail(const Error& error, bool json) {
  if (json) {
    std::printf("%s\n", error_json(error).dump(2).c_str());
  } else {
    std::fprintf(stderr, "kernelhub download: %s\n", error.message.c_str());
  }
  return kExitFailure;
}

int run_download(std::span<const std::string> args) {
  const Arguments parsed = parse_arguments(
      args, {.flags = {"--json", "--quiet", "--all-variants", "--all-files"}, .options = {"--revision", "--version", "--variant"}});
  if (parsed.has("--help")) {
    std::fputs(kHelp, stdout);
    return kExitOk;
  }
  auto usage = [](const std::string& why) {
    std::fprintf(stderr, "kernelhub download: %s\n%s", why.c_str(), kHelp);
    return kExitUsage;
  };
  if (!parsed.error.empty()) return usage(parsed.error);
  if (parsed.positionals.size() != 1) return usage("expected exactly one ORG/NAME");
  if (parsed.option("--revision") && parsed.option("--version")) return usage("--revision and --version exclude each other");
  if ((parsed.option("--variant") ? 1 : 0) + parsed.has("--all-variants") + parsed.has("--all-files") > 1) {
    return usage("--variant, --all-variants and --all-files exclude each other");
  }
  const bool json = parsed.has("--json");
  const bool quiet = parsed.has("--quiet") || json;

  auto repo = client::RepoId::parse(parsed.positionals[0]);
  if (!repo) return usage(repo.error().message);
  std::string revision = parsed.option("--revision").value_or("main");
  if (auto v = parsed.option("--version")) {
    if (v->empty() || v->find_first_not_of("0123456789") != std::string::npos) {
      return usage("--version takes a non-negative integer, not `" + *v + "`");
    }
    revision = "v" + *v;
  }
  auto settings = client::Settings::from_env(process_environment());
  if (!settings) return fail(settings.error(), json);
  const client::HubClient hub(*settings);
  const auto started = std::chrono::steady_clock::now();
  const auto type = RepoType::kKernel;

  auto commit = hub.resolve_revision(*repo, type, revision);
  if (!commit) return fail(commit.error(), json);
  std::vector<std::string> variants;
  if (parsed.has("--all-files")) {
    // Leaves `variants` empty: one download of every file below.
  } else if (auto v = parsed.option("--variant")) {
    variants.push_back(*v);
  } else {
    auto names = hub.list_variants(*repo, type, *commit);
    if (!names) return fail(names.error(), json);
    if (parsed.has("--all-variants")) {
      variants = *names;
    } else {
      const auto decisions = resolver::select(*names, detect_environment());
      const resolver::Decision* best = resolver::chosen(decisions);
      if (!best) {
        return fail(Error{ErrorCode::kNoCompatibleVariant, "no variant of `" + repo->to_string() + "` at revision `" +
                                                                revision + "` runs here:\n" +
                                                                resolver::format_trace(decisions)},
                    json);
      }
      variants.push_back(best->name);
    }
  }
  client::DownloadOptions options;
  options.quiet = quiet;
  options.asked_revision = revision;
  nlohmann::json files = nlohmann::json::array();
  std::uint64_t bytes = 0, downloaded = 0;
  int requests = 0;
  std::vector<std::string> paths;
  const std::vector<std::string> whole_repo{""};
  for (const std::string& variant : variants.empty() ? whole_repo : variants) {
    auto snapshot = variant.empty() ? hub.download_prefixes(*repo, type, *commit, {}, options)
                                    : hub.download_variant(*repo, type, *commit, variant, options);
    if (!snapshot) return fail(snapshot.error(), json);
    for (const auto& f : snapshot->files) files.push_back(f);
    bytes += snapshot->bytes;
    downloaded += snapshot->downloaded_bytes;
    requests += snapshot->requests;
    paths.push_back(snapshot->path.string());
  }
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
                        {"requests", requests},
                        {"seconds", seconds}};
    std::printf("%s\n", j.dump(2).c_str());
    return kExitOk;
  }
  for (const auto& p : paths) std::printf("%s\n", p.c_str());
  return kExitOk;
}

}  // namespace

KERNELHUB_COMMAND("download", "download a kernel variant into the Hugging Face cache and print its path", &run_download);

}  // namespace kernelhub::cli
