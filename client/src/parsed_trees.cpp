#include "kernelhub/client/internal/parsed_trees.hpp"

namespace kernelhub::client {

std::optional<RepoTree> ParsedTrees::find(const std::filesystem::path& cache_file) const {
  std::lock_guard lock(mutex_);
  const auto it = trees_.find(cache_file);
  return it == trees_.end() ? std::nullopt : std::optional(it->second);
}

void ParsedTrees::keep(const std::filesystem::path& cache_file, const RepoTree& tree) {
  std::lock_guard lock(mutex_);
  if (trees_.size() >= capacity_ && !order_.empty()) {
    trees_.erase(order_.front());
    order_.erase(order_.begin());
  }
  if (trees_.insert_or_assign(cache_file, tree).second) order_.push_back(cache_file);
}

}  // namespace kernelhub::client
