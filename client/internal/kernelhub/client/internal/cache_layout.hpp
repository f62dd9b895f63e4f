// CacheLayout: the one module that knows the huggingface_hub cache layout. It builds every path
// and performs the small atomic writes (refs, snapshot links, CACHEDIR.TAG) so that a Python
// process sharing the cache sees exactly what huggingface_hub itself would have written
// (mirrors huggingface_hub `file_download.py` `hf_hub_download` docstring @ee0a451):
//
//   <cache>/
//     CACHEDIR.TAG
//     .locks/kernels--org--name/<etag>.lock      flock'ed while a blob is fetched
//     kernels--org--name/                         (models--, datasets--, spaces--)
//       refs/main                                 40-hex commit, no newline
//       refs/refs/pr/1                            a revision with `/` nests
//       blobs/<etag>                              content; 40-hex git sha1 or 64-hex sha256
//       blobs/<etag>.<8 hex>.incomplete           in-flight download, unique per writer
//       blobs/<etag>.incomplete                   a partial download kept to be continued
//       snapshots/<commit>/<path>                 relative symlink -> ../../blobs/<etag>
//       .no_exist/<commit>/<path>                 empty: <path> is absent at <commit>
//       trees/<commit>.json                       tree listing (format_version 1)
//
// Nothing becomes visible under blobs/, refs/, snapshots/ or trees/ except by rename(2) of a
// complete file (Note [Atomic publish], kernelhub/base/internal/atomic_file.hpp), so a reader (ours or
// Python's) never sees a partial one. The .locks/ flock only saves bandwidth; correctness never
// depends on it.
//
// Thread safety: a value type; its operations are safe to run concurrently from threads and
// processes (they rely on rename atomicity). Touches disk only in the functions that say so.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernelhub/base/result.hpp"
#include "kernelhub/client/internal/settings.hpp"
#include "kernelhub/client/repo_id.hpp"

namespace kernelhub::client {

class CacheLayout {
 public:
  CacheLayout(std::filesystem::path cache_root, RepoType type, RepoId repo);

  // "kernels--org--name".
  static std::string repo_folder_name(RepoType type, const RepoId& repo);
  // Inverse of repo_folder_name. Errors: kInvalidArgument for a folder that is not a repo's.
  struct Parsed {
    RepoType type;
    RepoId repo;
  };
  static Result<Parsed> parse_repo_folder(std::string_view folder);

  // "../../blobs/<etag>" with one more "../" per directory level of `path_in_repo`.
  static std::string blob_link_target(std::string_view path_in_repo, std::string_view etag);

  const std::filesystem::path& cache_root() const { return root_; }
  const std::filesystem::path& repo_dir() const { return repo_dir_; }
  RepoType type() const { return type_; }
  const RepoId& repo() const { return repo_; }

  // The folders of a repo folder `repo_dir` (repo_dir() of some layout), for code that walks a
  // folder it found rather than named: the cache scan, the cache check.
  static std::filesystem::path blobs_dir_of(const std::filesystem::path& repo_dir) { return repo_dir / "blobs"; }
  static std::filesystem::path snapshots_dir_of(const std::filesystem::path& repo_dir) {
    return repo_dir / "snapshots";
  }
  static std::filesystem::path refs_dir_of(const std::filesystem::path& repo_dir) { return repo_dir / "refs"; }
  // The repo folder whose snapshots/ holds `path` (`<repo>/snapshots/<commit>/...`, `path` made
  // absolute first), for code handed a folder that may lie in a snapshot: the signature check
  // follows a snapshot's links into that repo's blobs/ only. nullopt when `path` is in no snapshot.
  static std::optional<std::filesystem::path> repo_dir_of_snapshot_path(const std::filesystem::path& path);

  std::filesystem::path blobs_dir() const { return blobs_dir_of(repo_dir_); }
  std::filesystem::path snapshots_dir() const { return snapshots_dir_of(repo_dir_); }
  std::filesystem::path refs_dir() const { return refs_dir_of(repo_dir_); }
  std::filesystem::path blob_path(std::string_view etag) const;
  // blobs/<etag>.<8 random hex>.incomplete (fresh name on every call).
  std::filesystem::path incomplete_path(std::string_view etag) const;
  // blobs/<etag>.incomplete: a partial download kept to be continued (blob_download.hpp, Note
  // [Partial downloads]); huggingface_hub keeps and continues its own under the same name.
  std::filesystem::path partial_path(std::string_view etag) const;
  std::filesystem::path snapshot_dir(std::string_view commit) const;
  // REQUIRES: hub_names::validate_repo_path(path) (base/hub_names.hpp).
  std::filesystem::path snapshot_path(std::string_view commit, std::string_view path) const;
  std::filesystem::path ref_path(std::string_view revision) const;
  std::filesystem::path no_exist_path(std::string_view commit, std::string_view path) const;
  std::filesystem::path tree_path(std::string_view commit) const;
  std::filesystem::path lock_path(std::string_view etag) const;
  std::filesystem::path cachedir_tag_path() const { return root_ / "CACHEDIR.TAG"; }

  // Disk. The commit recorded in refs/<revision>, surrounding whitespace ignored (as the kernels
  // package reads it; huggingface_hub and kernelhub write none); nullopt if absent. Errors:
  // kCorruptFile when the file holds anything but a 40-hex commit (the message names the file
  // and says to delete it), kIo when it cannot be read. Nothing is changed on disk.
  Result<std::optional<std::string>> read_ref(std::string_view revision) const;
  // Disk. Writes refs/<revision> = commit (no newline) atomically (a temporary file beside it,
  // renamed over it, as the kernels package and huggingface_hub write it), only when it changed.
  // Errors: kIo.
  Status write_ref(std::string_view revision, std::string_view commit) const;
  // Disk. Points snapshots/<commit>/<path> at blobs/<etag> with a relative symlink (replacing
  // any older link atomically). Errors: kIo.
  Status link_snapshot(std::string_view commit, std::string_view path, std::string_view etag) const;
  // Disk. Creates the empty .no_exist/<commit>/<path> marker. Errors: kIo.
  Status mark_missing(std::string_view commit, std::string_view path) const;
  // Disk. Writes CACHEDIR.TAG at the cache root if missing (best effort, never fails).
  void ensure_cachedir_tag() const;
  // Disk. Names under refs/ (recursively, e.g. "main", "v1", "refs/pr/1") and commits under
  // snapshots/, sorted; empty when the repo is not cached. For "what is cached" error text.
  std::vector<std::string> list_refs() const;
  std::vector<std::string> list_snapshots() const;

 private:
  std::filesystem::path root_;
  RepoType type_;
  RepoId repo_;
  std::filesystem::path repo_dir_;
};

// True for 40 lower-case hex characters (a full commit id).
bool is_commit_hash(std::string_view text);

}  // namespace kernelhub::client
