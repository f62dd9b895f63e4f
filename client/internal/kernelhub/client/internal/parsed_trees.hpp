// ParsedTrees: repo listings already parsed, by their trees/<commit>.json path. A commit's listing
// never changes, so a listing read once is good for every later call that names the commit: the
// HubClients of one kernelhub::Session (fetch/session.hpp) share one, so a repeated get_kernel
// parses nothing; a HubClient made without one keeps its own (for it and its copies).
//
// Bounded: past `capacity` listings the oldest kept goes first.
//
// Thread safety: every method may be called from several threads at once.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include "kernelhub/client/internal/repo_tree.hpp"

namespace kernelhub::client {

class ParsedTrees {
 public:
  explicit ParsedTrees(std::size_t capacity = 64) : capacity_(capacity) {}

  // The listing kept for `cache_file`, if any.
  std::optional<RepoTree> find(const std::filesystem::path& cache_file) const;
  // Keeps `tree` as the listing of `cache_file`.
  void keep(const std::filesystem::path& cache_file, const RepoTree& tree);

 private:
  std::size_t capacity_;
  mutable std::mutex mutex_;
  std::map<std::filesystem::path, RepoTree> trees_;
  std::vector<std::filesystem::path> order_;  // oldest first
};

}  // namespace kernelhub::client
