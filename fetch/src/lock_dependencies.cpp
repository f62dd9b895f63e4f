#include "kernelhub/lockfile.hpp"
#include "kernelhub/publisher_trust.hpp"

namespace kernelhub {

Result<LockFile> lock_dependencies(const std::vector<KernelDependency>& dependencies, const client::HubClient& hub,
                                   bool trust_remote_code, const EnvironmentSource& env) {
  if (dependencies.empty()) {
    return unexpected(ErrorCode::kInvalidArgument, "there are no kernels to lock; list them as `\"org/name\" = 1`");
  }
  constexpr auto kType = RepoType::kKernel;
  LockFile out;
  for (const auto& dependency : dependencies) {
    KH_ASSIGN_OR_RETURN(client::RepoId repo, client::RepoId::parse(dependency.repo_id));
    const std::string wanted = dependency.wanted();
    auto commit = hub.resolve_revision(repo, kType, wanted);
    if (!commit) return unexpected(commit.error().with_context("locking `" + dependency.repo_id + "` at " + wanted));
    // As `kernels lock`: nothing is locked from a publisher that would not be loaded (asked once
    // the repo is known to exist: a repo that does not is not found, whoever publishes it).
    KH_RETURN_IF_ERROR(check_publisher_trust(hub, repo, trust_remote_code, {}, env));
    KH_ASSIGN_OR_RETURN(client::RepoTree tree, hub.tree(repo, kType, *commit));
    KernelLock lock{dependency, *commit, variant_lock_hashes(tree)};
    if (lock.variants.empty()) {
      return unexpected(ErrorCode::kNotFound, "`" + dependency.repo_id + "` at " + wanted + " (commit " + *commit +
                                                  ") has no build/torch* variants to lock");
    }
    out.locks.push_back(std::move(lock));
  }
  return out;
}

}  // namespace kernelhub
