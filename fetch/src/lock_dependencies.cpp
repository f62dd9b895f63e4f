#include <algorithm>

#include "kernelhub/fetch/internal/lockfile.hpp"
#include "kernelhub/fetch/internal/publisher_trust.hpp"
#include "kernelhub/fetch/metadata.hpp"

namespace kernelhub {

namespace {

constexpr auto kType = RepoType::kKernel;

// Locks `dependency` and, first, every kernel that a variant of it depends on (metadata.json
// `kernel-depends` of every variant, since the lock must serve every machine), as kernels 0.19.1's
// `lock_kernel_tree` does. `path` is the chain from a project dependency, for cycles.
// `trusted`: the publishers the Hub said it trusts during this lock, each asked once.
Status lock_tree(const KernelDependency& dependency, const client::HubClient& hub, bool trust_remote_code,
                 const EnvironmentSource& env, TrustedPublishers& trusted, std::vector<std::string>& path,
                 LockFile& out) {
  if (out.find(dependency) != nullptr) return {};
  const std::string name = dependency.describe();
  if (std::find(path.begin(), path.end(), name) != path.end()) {
    std::string chain;
    for (const auto& on_path : path) chain += on_path + " -> ";
    return unexpected(ErrorCode::kDependencyCycle,
                      "kernel dependency cycle: " + chain + name +
                          ". A kernel cannot depend on itself, directly or through other kernels; nothing was locked");
  }
  if (const KernelLock* other = out.find(dependency.repo_id)) {
    return unexpected(ErrorCode::kInvalidArgument,
                      "`" + dependency.repo_id + "` is needed both as " + other->dependency.describe() + " and as " +
                          name +
                          "; a lock file holds one commit per repo, so the kernels that depend on it must "
                          "agree on its version");
  }
  KH_ASSIGN_OR_RETURN(client::RepoId repo, client::RepoId::parse(dependency.repo_id));
  const std::string wanted = dependency.wanted();
  auto commit = hub.resolve_revision(repo, kType, wanted);
  if (!commit) return unexpected(commit.error().with_context("locking `" + dependency.repo_id + "` at " + wanted));
  // As `kernels lock`: nothing is locked from a publisher that would not be loaded (asked once
  // the repo is known to exist: a repo that does not is not found, whoever publishes it).
  KH_RETURN_IF_ERROR(check_publisher_trust(hub, repo, trust_remote_code, {}, env, trusted));
  KH_ASSIGN_OR_RETURN(client::RepoTree tree, hub.tree(repo, kType, *commit));
  KernelLock lock{dependency, *commit, variant_lock_hashes(tree)};
  if (lock.variants.empty()) {
    return unexpected(ErrorCode::kNotFound, "`" + dependency.repo_id + "` at " + wanted + " (commit " + *commit +
                                                ") has no build variants (folders under build/) to lock");
  }
  path.push_back(name);
  for (const std::string& variant : tree.subfolders("build")) {
    const std::string file = "build/" + variant + "/metadata.json";
    const bool listed = std::any_of(tree.files.begin(), tree.files.end(),
                                    [&](const client::TreeEntry& entry) { return entry.path == file; });
    if (!listed) continue;  // built before kernel-builder wrote metadata.json: no dependencies
    KH_ASSIGN_OR_RETURN(client::Snapshot downloaded, hub.download_file(repo, kType, *commit, file));
    auto metadata = Metadata::read(downloaded.path.parent_path());
    if (!metadata) return unexpected(metadata.error().with_context("locking `" + name + "`, " + file));
    for (const KernelDependency& needed : metadata->kernel_depends) {
      KH_RETURN_IF_ERROR(lock_tree(needed, hub, trust_remote_code, env, trusted, path, out));
    }
  }
  path.pop_back();
  out.locks.push_back(std::move(lock));
  return {};
}

}  // namespace

Result<LockFile> lock_dependencies(const std::vector<KernelDependency>& dependencies, const client::HubClient& hub,
                                   bool trust_remote_code, const EnvironmentSource& env) {
  if (dependencies.empty()) {
    return unexpected(ErrorCode::kInvalidArgument, "there are no kernels to lock; list them as `\"org/name\" = 1`");
  }
  LockFile out;
  TrustedPublishers trusted;
  std::vector<std::string> path;
  for (const auto& dependency : dependencies) {
    KH_RETURN_IF_ERROR(lock_tree(dependency, hub, trust_remote_code, env, trusted, path, out));
  }
  // In the order kernels writes its locks (a sorted map): by repo, versions before revisions.
  std::sort(out.locks.begin(), out.locks.end(), [](const KernelLock& a, const KernelLock& b) {
    return lock_order(a.dependency) < lock_order(b.dependency);
  });
  return out;
}

}  // namespace kernelhub
