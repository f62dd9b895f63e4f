#include "kernelhub/fetch/kernel_tree.hpp"

#include <map>
#include <utility>

#include "kernelhub/fetch/local_kernels.hpp"
#include "request_lock.hpp"

namespace kernelhub {

namespace {

// Kernels are the same dependency when repo and version or revision are (kernels' KernelDependency).
std::string key_of(const KernelDependency& dependency) {
  return dependency.repo_id + '\n' +
         (dependency.version ? "v" + std::to_string(*dependency.version) : "r" + dependency.revision.value_or(""));
}

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

class TreeFetcher {
 public:
  explicit TreeFetcher(const FetchContext& ctx) : ctx_(ctx) {}

  Result<std::size_t> visit(const FetchRequest& request, std::string name, KernelDependency wanted) {
    const std::string key = key_of(wanted);
    for (const auto& [on_path, _] : path_) {
      if (on_path == key) return unexpected(cycle(request.wording, name));
    }
    if (const auto it = done_.find(key); it != done_.end()) return it->second;
    path_.emplace_back(key, name);
    auto fetched = fetch_variant(request, ctx_);
    if (!fetched) return unexpected(in_chain(fetched.error()));
    KernelTreeNode node{std::move(name), std::move(wanted), std::move(*fetched), {}};
    for (const KernelDependency& dependency : node.fetched.metadata.kernel_depends) {
      auto child = request_for(request, dependency);
      if (!child) return unexpected(in_chain(child.error(), dependency.repo_id));
      KH_ASSIGN_OR_RETURN(std::size_t index, visit(*child, dependency.repo_id, dependency));
      node.dependencies.push_back(index);
    }
    path_.pop_back();
    tree_.nodes.push_back(std::move(node));
    done_.emplace(key, tree_.nodes.size() - 1);
    return tree_.nodes.size() - 1;
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
    KH_ASSIGN_OR_RETURN(auto local, local_kernel_dir(dependency.repo_id, ctx_.env, parent.wording));
    if (local) {
      child.source = *std::move(local);
    } else {
      KH_ASSIGN_OR_RETURN(child.source, client::RepoId::parse(dependency.repo_id));
    }
    return child;
  }

  // "a -> b -> c", the path from the kernel asked for, then `last` when given.
  std::string chain(std::string_view last = {}) const {
    std::string text;
    for (const auto& [_, name] : path_) text += (text.empty() ? "" : " -> ") + name;
    if (!last.empty()) text += " -> " + std::string(last);
    return text;
  }

  // An error of a dependency (not of the kernel asked for) says which chain led to it.
  Error in_chain(const Error& error, std::string_view last = {}) const {
    if (path_.size() < 2 && last.empty()) return error;
    return error.with_context("kernel dependency " + chain(last));
  }

  Error cycle(Wording wording, const std::string& name) const {
    if (wording == Wording::kKernels) {
      // kernels/_internals/deps.py `resolve_kernel_tree`, with the chain added
      return Error{ErrorCode::kDependencyCycle,
                   "Cyclic kernel dependency detected: " + name + " (" + chain(name) + ")"};
    }
    return Error{ErrorCode::kDependencyCycle,
                 "kernel dependency cycle: " + chain(name) +
                     ". A kernel cannot depend on itself, directly or through other kernels: the `kernel-depends` "
                     "of one of them in its metadata.json (build.toml) must drop the entry that closes the loop"};
  }

  const FetchContext& ctx_;
  KernelTree tree_;
  std::map<std::string, std::size_t> done_;                // fetched: key → index in tree_.nodes
  std::vector<std::pair<std::string, std::string>> path_;  // (key, name) from the kernel asked for
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
  std::string name = wanted.repo_id;  // the repo id, or the directory's path
  TreeFetcher fetcher(ctx);
  KH_RETURN_IF_ERROR(fetcher.visit(request, std::move(name), std::move(wanted)));
  return fetcher.take();
}

}  // namespace kernelhub
