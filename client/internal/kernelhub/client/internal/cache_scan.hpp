// A scan of the Hugging Face cache (cache_layout.hpp): each repo folder's refs, snapshots, the
// files of each snapshot and the blobs they point at, read as huggingface_hub's scan_cache_dir
// reads them (utils/_cache_manager.py `_scan_cached_repo`), so sizes and times agree with `hf cache
// ls` and `kernels cache ls`:
//   - a revision's size counts each blob its files point at once; a repo's, each blob any of its
//     revisions points at once;
//   - a revision was last modified when its newest blob was (an empty one: its folder), a repo
//     when its newest blob was, and last accessed likewise with access times;
//   - a repo folder that is not whole (no snapshots/, a broken snapshot link, a ref to a commit
//     with no snapshot) is left out with a warning saying why, as huggingface_hub does.
// What the files are (build variants and so on) is the caller's to decide.
//
// Thread safety: a function of what is on disk; other processes may change the cache meanwhile.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "kernelhub/base/internal/repo_type.hpp"
#include "kernelhub/base/result.hpp"
#include "kernelhub/client/repo_id.hpp"

namespace kernelhub::client {

struct CachedFile {
  std::string path;            // repo-relative, `/`-separated, e.g. build/<variant>/metadata.json
  std::filesystem::path blob;  // what the snapshot entry points at (itself when not a link)
  std::uint64_t size = 0;      // the blob's
};

struct CachedRevision {
  std::string commit;              // the snapshot folder's name
  std::filesystem::path snapshot;  // snapshots/<commit>
  std::vector<std::string> refs;   // the refs/ names that point at it ("main", "v1", "refs/pr/1"), sorted
  std::vector<CachedFile> files;   // sorted by path
  std::uint64_t size_on_disk = 0;  // its distinct blobs
  double last_modified = 0;        // seconds since the epoch
  double last_accessed = 0;
};

struct CachedRepo {
  RepoType type = RepoType::kKernel;
  RepoId repo;
  std::filesystem::path dir;              // <cache>/kernels--org--name
  std::vector<CachedRevision> revisions;  // sorted by commit
  std::size_t blobs = 0;                  // distinct blobs its revisions point at
  std::uint64_t size_on_disk = 0;         // of those blobs
  double last_modified = 0;
  double last_accessed = 0;
};

struct CacheScan {
  std::filesystem::path root;
  std::vector<CachedRepo> repos;      // sorted by repo id
  std::vector<std::string> warnings;  // one per repo folder left out, saying why
};

// Scans `root`, keeping the repos of `type` (all types when none). Errors: kNotFound when `root`
// does not exist, kInvalidArgument when it is not a directory, kIo when it cannot be listed.
Result<CacheScan> scan_cache(const std::filesystem::path& root, std::optional<RepoType> type = RepoType::kKernel);

}  // namespace kernelhub::client
