#include "kernelhub/fetch/internal/kernel_tree.hpp"

#include <utility>

#include "kernelhub/fetch/internal/kernel_walk.hpp"
#include "kernelhub/fetch/internal/local_kernels.hpp"
#include "request_lock.hpp"

namespace kernelhub {

namespace {

// What the request itself asks for, as a dependency would name it. A locked request asks for what
// its lock entry was locked as; a directory, as kernels names a local kernel (its path, version 0).
Result<KernelDependency> wanted_by(const FetchRequest& request) {
  if (const auto* dir = std::get_if<std::filesystem::path>(&request.source)) {
    return KernelDependency{dir->string(), 0, std::nullopt};
  }
  const std::string repo = std::get<client::RepoId>(request.source).to_string();
  if (has_lock(request) && !request.revision && !request.version) {
    KH_ASSIGN_OR_RETURN(const RequestLock lock, request_lock(request));
    KH_ASSIGN_OR_RETURN(KernelLock entry, request_lock_entry(lock, request, repo));
    if (entry.dependency.version || entry.dependency.revision) return entry.dependency;
    return KernelDependency{repo, std::nullopt, entry.commit};  // a lock that records no version
  }
  return KernelDependency{repo, request.version, request.revision};
}

// Fetches each kernel the walk reaches (kernel_walk.hpp), with the options of the request for the
// kernel asked for; a kernel's node joins the tree once the kernels it depends on have.
class TreeFetcher : public KernelWalkVisitor {
 public:
  TreeFetcher(const FetchRequest& request, const FetchContext& ctx) : request_(request), ctx_(ctx) {}

  Result<std::vector<KernelDependency>> enter(const KernelDependency& kernel) override {
    FetchRequest request = request_;
    if (!entered_.empty()) {
      KH_ASSIGN_OR_RETURN(request, request_for(entered_.back().request, kernel));
    }
    KH_ASSIGN_OR_RETURN(FetchedVariant fetched, fetch_variant(request, ctx_));
    entered_.push_back({std::move(request), KernelTreeNode{kernel.repo_id, kernel, std::move(fetched), {}}});
    return entered_.back().node.fetched.metadata.kernel_depends;
  }

  void leave(const KernelDependency&, const KernelDependency*, std::vector<std::size_t> dependencies) override {
    KernelTreeNode node = std::move(entered_.back().node);
    entered_.pop_back();
    node.dependencies = std::move(dependencies);
    tree_.nodes.push_back(std::move(node));
  }

  KernelTree take() { return std::move(tree_); }

 private:
  // The request for a dependency of the kernel `parent` fetched: its LOCAL_KERNELS directory, or
  // its repo at its version or revision (with a lock file: the lock's entry for exactly that).
  Result<FetchRequest> request_for(const FetchRequest& parent, const KernelDependency& dependency) const {
    FetchRequest child = parent;
    child.revision = dependency.revision;
    child.version = dependency.version;
    child.locked_as.reset();
    if (has_lock(parent)) {
      child.revision.reset();
      child.version.reset();
      child.locked_as = dependency;
    }
    KH_ASSIGN_OR_RETURN(auto local, local_kernel_dir(dependency.repo_id, ctx_.env));
    if (local) {
      child.source = *std::move(local);
    } else {
      KH_ASSIGN_OR_RETURN(child.source, client::RepoId::parse(dependency.repo_id));
    }
    return child;
  }

  struct Entered {
    FetchRequest request;
    KernelTreeNode node;  // its dependencies not yet known
  };

  const FetchRequest& request_;  // for the kernel asked for
  const FetchContext& ctx_;
  std::vector<Entered> entered_;  // from the kernel asked for to the one the walk is in
  KernelTree tree_;
};

}  // namespace

Result<KernelTree> fetch_kernel_tree(const FetchRequest& request, const FetchContext& ctx,
                                     std::optional<KernelDependency> standing_for) {
  KernelDependency wanted;
  if (standing_for) {
    wanted = *std::move(standing_for);
  } else {
    KH_ASSIGN_OR_RETURN(wanted, wanted_by(request));
  }
  TreeFetcher fetcher(request, ctx);
  KH_RETURN_IF_ERROR(walk_kernel_tree(wanted, fetcher));
  return fetcher.take();
}

}  // namespace kernelhub
