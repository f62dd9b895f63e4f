#include "locked_download.hpp"

#include <algorithm>
#include <cassert>

#include "checked_download.hpp"
#include "kernelhub/fetch/internal/lockfile.hpp"
#include "kernelhub/resolver/internal/closest_miss.hpp"
#include "kernelhub/resolver/select.hpp"
#include "kernelhub/signing/internal/signature_file.hpp"

namespace kernelhub::cli {

namespace {

constexpr auto kKernel = RepoType::kKernel;

// The variants of `lock` to download: by name, all of them, or the one this machine loads.
Result<std::vector<std::string>> variants_to_fetch(const LockedDownload& request, const KernelLock& lock,
                                                   const client::RepoId& repo, const client::HubClient& hub) {
  if (request.variant) return std::vector<std::string>{*request.variant};
  KH_ASSIGN_OR_RETURN(std::vector<std::string> names, hub.list_variants(repo, kKernel, lock.commit));
  if (request.all_variants) return names;
  assert(request.environment);
  const auto decisions = resolver::select(names, *request.environment, request.loadable);
  const resolver::Decision* best = resolver::chosen(decisions);
  if (best == nullptr) {
    return unexpected(
        ErrorCode::kNoCompatibleVariant,
        resolver::no_variant_message("`" + repo.to_string() + "` at its locked commit `" + lock.commit + "`", decisions,
                                     *request.environment, request.loadable) +
            "\nA login node unlike the compute nodes can fetch them all with --all-variants, "
            "or one with --variant");
  }
  return std::vector<std::string>{best->name};
}

}  // namespace

Result<nlohmann::json> download_locked(const LockedDownload& request, const client::HubClient& hub,
                                       const EnvironmentSource& env) {
  KH_ASSIGN_OR_RETURN(LockFile lockfile, LockFile::read(request.lockfile));
  for (const std::string& wanted : request.repos) {
    if (lockfile.find(wanted) == nullptr) {
      return unexpected(ErrorCode::kNotFound, "`" + wanted + "` is not locked in `" + request.lockfile.string() +
                                                  "`; run `kernelhub lock` after adding it to the dependencies");
    }
  }
  nlohmann::json kernels = nlohmann::json::array();
  for (const KernelLock& lock : lockfile.locks) {
    const std::string& id = lock.dependency.repo_id;
    if (!request.repos.empty() && std::find(request.repos.begin(), request.repos.end(), id) == request.repos.end()) {
      continue;
    }
    KH_ASSIGN_OR_RETURN(client::RepoId repo, client::RepoId::parse(id));
    KH_ASSIGN_OR_RETURN(std::vector<std::string> variants, variants_to_fetch(request, lock, repo, hub));
    KH_ASSIGN_OR_RETURN(client::RepoTree tree, hub.tree(repo, kKernel, lock.commit));
    nlohmann::json entry = {{"repo", id},
                            {"commit", lock.commit},
                            {"variants", variants},
                            {"paths", nlohmann::json::array()},
                            {"files", 0},
                            {"bytes", 0},
                            {"downloaded_bytes", 0},
                            {"resumed_bytes", 0},
                            {"repaired", nlohmann::json::array()},
                            {"requests", 0}};
    const int requests_before = hub.requests();
    for (const std::string& variant : variants) {
      client::DownloadOptions options;
      options.quiet = request.quiet;
      options.asked_revision = lock.dependency.wanted();
      options.with_files = {signing::signature_repo_path(variant)};  // a later get checks it
      options.force = request.force;
      KH_ASSIGN_OR_RETURN(client::Snapshot snapshot, checked_download(hub, repo, lock.commit, variant, options, env));
      say_repaired("kernelhub download", snapshot);
      // The lock's hash of this variant, when the lock file carries hashes (kernelhub.lock).
      if (auto it = lock.variants.find(variant); it != lock.variants.end()) {
        auto checked = verify_variant_lock(snapshot.path, tree, variant, it->second);
        if (!checked) return unexpected(checked.error().with_context("`" + id + "` as locked"));
      }
      entry["paths"].push_back(snapshot.path.string());
      entry["files"] = entry["files"].get<std::size_t>() + snapshot.files.size();
      entry["bytes"] = entry["bytes"].get<std::uint64_t>() + snapshot.bytes;
      entry["downloaded_bytes"] = entry["downloaded_bytes"].get<std::uint64_t>() + snapshot.downloaded_bytes;
      entry["resumed_bytes"] = entry["resumed_bytes"].get<std::uint64_t>() + snapshot.resumed_bytes;
      for (auto& repaired : repaired_json(snapshot)) entry["repaired"].push_back(std::move(repaired));
    }
    entry["requests"] = hub.requests() - requests_before;
    kernels.push_back(std::move(entry));
  }
  return nlohmann::json{{"lockfile", request.lockfile.string()}, {"kernels", std::move(kernels)}};
}

}  // namespace kernelhub::cli
