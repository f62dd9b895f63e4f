#include "checked_download.hpp"

#include <cstdio>

#include "kernelhub/base/internal/file_digests.hpp"
#include "kernelhub/base/internal/printable.hpp"
#include "kernelhub/client/internal/cache_layout.hpp"
#include "kernelhub/fetch/internal/session.hpp"
#include "kernelhub/fetch/internal/verification_stamps.hpp"

namespace kernelhub::cli {

Result<client::Snapshot> checked_download(const client::HubClient& hub, const client::RepoId& repo,
                                          const std::string& commit, const std::string& variant,
                                          client::DownloadOptions options, const EnvironmentSource& env) {
  constexpr auto kKernel = RepoType::kKernel;
  const VerificationStamps stamps = Session::process_default().verification_stamps(env);
  FileDigests digests;
  const client::CacheLayout layout(hub.settings().cache_dir(kKernel), kKernel, repo);
  const std::filesystem::path dir =
      variant.empty() ? layout.snapshot_dir(commit) : layout.snapshot_path(commit, "build/" + variant);
  if (!variant.empty()) stamps.seed(dir, digests);
  options.verify_cached = true;
  options.digests = &digests;
  auto snapshot = variant.empty() ? hub.download_prefixes(repo, kKernel, commit, {}, options)
                                  : hub.download_variant(repo, kKernel, commit, variant, options);
  if (!snapshot) return snapshot;
  if (!variant.empty()) {
    // What streamed in was hashed on the way: the next command need not read it either.
    remember_downloaded(snapshot->downloaded_sha256, digests);
    for (const auto& [blob, hash] : snapshot->downloaded_sha256) (void)digests.hash(blob);  // used: recorded
    stamps.record(snapshot->path, digests);
  }
  return snapshot;
}

nlohmann::json repaired_json(const client::Snapshot& snapshot) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : snapshot.repaired) {
    out.push_back({{"path", r.path}, {"blob", r.blob.string()}, {"found", r.found}});
  }
  return out;
}

void say_repaired(std::string_view command, const client::Snapshot& snapshot) {
  for (const auto& r : snapshot.repaired) {
    std::fprintf(stderr,
                 "%.*s: repaired `%s`: its blob %s had changed in the cache (it hashed to %s); downloaded "
                 "again\n",
                 static_cast<int>(command.size()), command.data(), printable(r.path, Lines::kEscaped).c_str(),
                 r.blob.filename().c_str(), r.found.c_str());
  }
}

}  // namespace kernelhub::cli
