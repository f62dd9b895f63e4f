// kernelhub cache verify [ORG/NAME...] [--repair] [--cache-dir DIR] [--json]: every blob of every
// cached kernel (or of those named) hashed against its name (client/cached_blob.hpp), every
// snapshot link checked; with --repair, each file whose blob changed in the cache or is gone is
// downloaded again at its commit, and a changed blob no snapshot uses is removed. Exit 0 when the
// cache is (now) intact, 9 when a problem is left (reported), else the status of what stopped a
// repair (cli_app.hpp: 5 when the Hub cannot be reached, ...).
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "command.hpp"
#include "kernelhub/client/internal/cache_layout.hpp"
#include "kernelhub/client/internal/cached_blob.hpp"
#include "kernelhub/client/internal/hub_client.hpp"

namespace kernelhub::cli {

namespace {

constexpr std::string_view kCommand = "kernelhub cache verify";
constexpr auto kKernel = RepoType::kKernel;

struct CacheVerifyArguments {
  std::vector<std::string> repos;
  std::optional<std::string> cache_dir;
  bool repair = false;
  bool json = false;
};

std::string file_label(const client::SnapshotFile& file) {
  return file.path + " @ " + file.commit.substr(0, 12);
}

// What one repo's check found, and what --repair did about it.
struct RepoReport {
  client::RepoId repo;
  std::filesystem::path dir;
  client::RepoCacheCheck check;
  bool repaired = false;
  std::optional<Error> repair_error;

  bool intact() const { return check.changed.empty() && check.missing.empty(); }
};

// Downloads again, at their commits, the files whose blob changed or is gone, and removes the
// changed blobs no snapshot uses. Errors: the client's.
Status repair(const client::HubClient& hub, RepoReport& report) {
  std::map<std::string, std::vector<std::string>> by_commit;
  for (const auto& changed : report.check.changed) {
    if (changed.used_by.empty()) {
      std::error_code ec;
      std::filesystem::remove(changed.blob.blob, ec);
      if (ec) return unexpected(os_error("cannot remove `" + changed.blob.blob.string() + "`", ec.value()));
      continue;
    }
    for (const auto& file : changed.used_by) by_commit[file.commit].push_back(file.path);
  }
  for (const auto& file : report.check.missing) by_commit[file.commit].push_back(file.path);
  for (const auto& [commit, paths] : by_commit) {
    client::DownloadOptions options;
    options.verify_cached = true;
    KH_RETURN_IF_ERROR(hub.download_prefixes(report.repo, kKernel, commit, paths, options));
  }
  return {};
}

nlohmann::json report_json(const RepoReport& r) {
  nlohmann::json changed = nlohmann::json::array();
  for (const auto& c : r.check.changed) {
    nlohmann::json used = nlohmann::json::array();
    for (const auto& f : c.used_by) used.push_back({{"commit", f.commit}, {"path", f.path}});
    changed.push_back({{"blob", c.blob.blob.string()}, {"found", c.blob.found}, {"used_by", used}});
  }
  nlohmann::json missing = nlohmann::json::array();
  for (const auto& f : r.check.missing) missing.push_back({{"commit", f.commit}, {"path", f.path}});
  nlohmann::json partial = nlohmann::json::array();
  for (const auto& p : r.check.partial) partial.push_back(p.string());
  nlohmann::json out = {{"repo", r.repo.to_string()}, {"path", r.dir.string()}, {"blobs", r.check.blobs},
                        {"bytes", r.check.bytes},     {"changed", changed},     {"missing", missing},
                        {"partial", partial},         {"intact", r.intact()},   {"repaired", r.repaired}};
  if (r.repair_error)
    out["repair_error"] = {{"code", to_string(r.repair_error->code)}, {"message", r.repair_error->message}};
  return out;
}

void print_report(const RepoReport& r) {
  const std::string id = r.repo.to_string();
  if (r.intact()) {
    std::printf(
        "%s: %zu blobs (%.1f MB) intact%s\n", id.c_str(), r.check.blobs, static_cast<double>(r.check.bytes) / 1e6,
        r.check.partial.empty()
            ? ""
            : (", " + std::to_string(r.check.partial.size()) + " partial download(s) kept to be continued").c_str());
    return;
  }
  for (const auto& c : r.check.changed) {
    std::printf("%s: blob %s changed in the cache: it hashes to %s (`%s`)\n", id.c_str(),
                c.blob.blob.filename().c_str(), c.blob.found.c_str(), c.blob.blob.c_str());
    for (const auto& f : c.used_by) std::printf("  used by %s\n", printable(file_label(f), Lines::kEscaped).c_str());
    if (c.used_by.empty()) std::printf("  used by no snapshot\n");
  }
  for (const auto& f : r.check.missing)
    std::printf("%s: %s links to a blob that is gone\n", id.c_str(), printable(file_label(f), Lines::kEscaped).c_str());
  if (r.repaired) {
    std::printf("%s: repaired\n", id.c_str());
  } else if (r.repair_error) {
    std::printf("%s: not repaired: %s\n", id.c_str(), printable(r.repair_error->message).c_str());
  } else {
    std::printf("%s: repair with `kernelhub cache verify %s --repair`\n", id.c_str(), id.c_str());
  }
}

int run_cache_verify(const CacheVerifyArguments& args, const CLI::App& app) {
  auto settings = client::Settings::from_env(process_environment());
  if (!settings) return fail(kCommand, settings.error(), args.json);
  const std::filesystem::path root =
      args.cache_dir ? std::filesystem::path(*args.cache_dir) : settings->cache_dir(kKernel);
  std::vector<client::RepoId> wanted;
  for (const auto& text : args.repos) {
    auto repo = client::RepoId::parse(text);
    if (!repo) return usage_error(app, repo.error().message);
    wanted.push_back(*repo);
  }
  std::vector<RepoReport> reports;
  std::error_code ec;
  if (wanted.empty()) {
    if (!std::filesystem::is_directory(root, ec)) {
      return fail(kCommand, Error{ErrorCode::kNotFound, "no cache at `" + root.string() + "`"}, args.json);
    }
    std::vector<std::filesystem::path> folders;
    for (std::filesystem::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
      folders.push_back(it->path());
    }
    std::sort(folders.begin(), folders.end());
    for (const auto& folder : folders) {
      auto parsed = client::CacheLayout::parse_repo_folder(folder.filename().string());
      if (parsed && parsed->type == kKernel) reports.push_back({parsed->repo, folder, {}, false, {}});
    }
  } else {
    for (const auto& repo : wanted) {
      const client::CacheLayout layout(root, kKernel, repo);
      if (!std::filesystem::is_directory(layout.repo_dir(), ec)) {
        return fail(
            kCommand,
            Error{ErrorCode::kNotFound, "`" + repo.to_string() + "` is not in the cache at `" + root.string() + "`"},
            args.json);
      }
      reports.push_back({repo, layout.repo_dir(), {}, false, {}});
    }
  }
  client::Settings hub_settings = *settings;
  if (args.cache_dir) hub_settings.kernels_cache = root;
  const client::HubClient hub(hub_settings);
  for (auto& report : reports) {
    auto check = client::check_cached_repo(report.dir);
    if (!check) return fail(kCommand, check.error(), args.json);
    report.check = std::move(*check);
    if (!args.repair || report.intact()) continue;
    if (auto repaired = repair(hub, report); repaired) {
      report.repaired = true;
    } else {
      report.repair_error = repaired.error();
    }
  }
  say_fallbacks(kCommand, hub.fallbacks());
  std::size_t blobs = 0, broken = 0, left = 0;
  const Error* first_repair_error = nullptr;
  for (const auto& r : reports) {
    blobs += r.check.blobs;
    if (!r.intact()) ++broken;
    if (!r.intact() && !r.repaired) ++left;
    if (r.repair_error && first_repair_error == nullptr) first_repair_error = &*r.repair_error;
  }
  if (args.json) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& r : reports) list.push_back(report_json(r));
    std::printf("%s\n",
                nlohmann::json{{"cache_dir", root.string()}, {"repos", list}, {"blobs", blobs}, {"intact", left == 0}}
                    .dump(2)
                    .c_str());
  } else {
    for (const auto& r : reports) print_report(r);
    std::printf(
        "%zu kernel repo(s), %zu blobs checked: %s\n", reports.size(), blobs,
        broken == 0
            ? "all intact"
            : (std::to_string(broken) + " with problems, " + std::to_string(broken - left) + " repaired").c_str());
  }
  if (left == 0) return kExitOk;
  if (first_repair_error != nullptr) {
    std::fprintf(stderr, "%.*s: error: %s\n", static_cast<int>(kCommand.size()), kCommand.data(),
                 printable(first_repair_error->message).c_str());
    return exit_status(first_repair_error->code);
  }
  return kExitIntegrity;
}

CommandRun define_cache_verify(CLI::App& app) {
  auto args = std::make_shared<CacheVerifyArguments>();
  app.description(
      "Check every cached kernel (or those named): each blob must still hash to its name (its sha256,\n"
      "or its git blob sha1), and each snapshot file must lead to a blob. A blob that changed in the\n"
      "cache (a disk error, a tool or a person writing into it) would be refused by `kernelhub get`;\n"
      "--repair downloads each affected file again at its commit (and removes a changed blob no\n"
      "snapshot uses). Partial downloads kept to be continued are listed, not counted as problems.");
  app.add_option("ORG/NAME", args->repos, "the cached kernels to check (default: all)");
  app.add_flag("--repair", args->repair, "download again what changed in the cache or is gone");
  app.add_option("--cache-dir", args->cache_dir, "the cache to check (default: KERNELS_CACHE, else HF_HUB_CACHE)")
      ->option_text("DIR");
  app.add_flag("--json", args->json,
               "print one JSON object: {\"cache_dir\", \"blobs\", \"intact\", \"repos\": [{\"repo\", \"blobs\", "
               "\"changed\", \"missing\", \"partial\", \"intact\", \"repaired\"}]}");
  return [args, &app] { return run_cache_verify(*args, app); };
}

}  // namespace

KERNELHUB_SUBCOMMAND("cache", "verify", "check every cached kernel's files, and repair them (--repair)",
                     &define_cache_verify);

}  // namespace kernelhub::cli
