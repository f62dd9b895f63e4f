#include "kernelhub/fetch/internal/kernel_walk.hpp"

#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "kernelhub/fetch/internal/problem.hpp"

namespace kernelhub {

namespace {

// Kernels are the same dependency when repo and version or revision are (kernels' KernelDependency).
std::string key_of(const KernelDependency& dependency) {
  return dependency.repo_id + '\n' +
         (dependency.version ? "v" + std::to_string(*dependency.version) : "r" + dependency.revision.value_or(""));
}

class Walk {
 public:
  explicit Walk(KernelWalkVisitor& visitor) : visitor_(visitor) {}

  Result<std::size_t> visit(const KernelDependency& kernel, const KernelDependency* needed_by) {
    std::string key = key_of(kernel);
    for (const auto& [on_path, _] : path_) {
      if (on_path == key) return unexpected(cycle(kernel.repo_id));
    }
    if (const auto it = done_.find(key); it != done_.end()) return it->second;
    path_.emplace_back(key, kernel.repo_id);
    auto needed = visitor_.enter(kernel);
    if (!needed) return unexpected(in_chain(needed.error()));
    std::vector<std::size_t> dependencies;
    for (const KernelDependency& dependency : *needed) {
      KH_ASSIGN_OR_RETURN(std::size_t place, visit(dependency, &kernel));
      dependencies.push_back(place);
    }
    path_.pop_back();
    visitor_.leave(kernel, needed_by, std::move(dependencies));
    done_.emplace(std::move(key), left_);
    return left_++;
  }

 private:
  // "a -> b -> c", the path from the first kernel, then `last` when given.
  std::string chain(std::string_view last = {}) const {
    std::string text;
    for (const auto& [_, name] : path_) text += (text.empty() ? "" : " -> ") + name;
    if (!last.empty()) text += " -> " + std::string(last);
    return text;
  }

  // An error of a dependency (not of the first kernel) says which chain led to it.
  Error in_chain(const Error& error) const {
    if (path_.size() < 2) return error;
    return error.with_context("kernel dependency " + chain());
  }

  Error cycle(const std::string& name) const {
    return problem_error(ErrorCode::kDependencyCycle,
                         "kernel dependency cycle: " + chain(name) +
                             ". A kernel cannot depend on itself, directly or through other kernels: the "
                             "`kernel-depends` of one of them in its metadata.json (build.toml) must drop the entry "
                             "that closes the loop",
                         DependencyLoop{name, chain(name)});
  }

  KernelWalkVisitor& visitor_;
  std::size_t left_ = 0;                                   // kernels left so far
  std::map<std::string, std::size_t> done_;                // left: key → place in the order of leaving
  std::vector<std::pair<std::string, std::string>> path_;  // (key, repo id) from the first kernel
};

}  // namespace

Result<std::size_t> walk_kernel_tree(const KernelDependency& kernel, KernelWalkVisitor& visitor) {
  return Walk(visitor).visit(kernel, nullptr);
}

}  // namespace kernelhub
