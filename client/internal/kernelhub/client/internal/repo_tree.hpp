// RepoTree: the files of a repo at one commit, as the Hub's tree API lists them and as
// huggingface_hub caches them in trees/<commit>.json (format_version 1, see _tree_cache.py).
//
// Thread safety: a value type.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernelhub/base/result.hpp"

namespace kernelhub::client {

struct TreeEntry {
  std::string path;                       // repo-relative, `/`-separated
  std::uint64_t size = 0;                 // the real size (LFS too)
  std::string blob_id;                    // git blob sha1 (40 hex)
  std::optional<std::string> lfs_sha256;  // 64 hex, for LFS files
  std::optional<std::string> xet_hash;

  bool is_lfs() const { return lfs_sha256.has_value(); }
  // The blob name in the cache and the digest the content must match: sha256 for LFS, else sha1.
  const std::string& etag() const { return lfs_sha256 ? *lfs_sha256 : blob_id; }
};

// Note [Unsafe paths in a listing]: a listed file whose path fails hub_names::validate_repo_path
// (a backslash, a `..` segment, a control character) is no file of `files`: nothing makes a path
// in the cache or a request from it. It is kept, as listed, in `unsafe`, so that a download
// that would include it (under its prefix: a variant's folder, or the whole repo) is refused
// (kCorruptFile) rather than silently incomplete; a file elsewhere (`docs\notes.md` beside build/)
// is none of a variant's business and changes nothing, as in the `kernels` package, which
// downloads by pattern.
struct RepoTree {
  std::string commit;
  std::vector<TreeEntry> files;   // sorted by path
  std::vector<TreeEntry> unsafe;  // sorted by path; see the Note

  // Files whose path starts with `prefix` (e.g. "build/torch-cpu/").
  std::vector<const TreeEntry*> under(std::string_view prefix) const;
  // Errors: kCorruptFile naming (printable.hpp) the first unsafe path that starts with one of
  // `prefixes` (none: any) or is one of `files`.
  Status check_no_unsafe_path(const std::vector<std::string>& prefixes, const std::vector<std::string>& files) const;
  // The directory names directly under `folder` ("build" -> variant names), sorted.
  std::vector<std::string> subfolders(std::string_view folder) const;

  // trees/<commit>.json text, byte-compatible with huggingface_hub (indent 1, sorted keys); the
  // unsafe paths are listed too, as the Hub listed them, so that a later read refuses the same.
  std::string to_cache_json() const;
  // Errors: kCorruptFile for bad JSON or an unknown format_version. A path that fails
  // validate_repo_path goes to `unsafe`.
  static Result<RepoTree> from_cache_json(std::string_view commit, std::string_view text);
};

}  // namespace kernelhub::client
