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

struct RepoTree {
  std::string commit;
  std::vector<TreeEntry> files;  // sorted by path

  // Files whose path starts with `prefix` (e.g. "build/torch-cpu/").
  std::vector<const TreeEntry*> under(std::string_view prefix) const;
  // The directory names directly under `folder` ("build" -> variant names), sorted.
  std::vector<std::string> subfolders(std::string_view folder) const;

  // trees/<commit>.json text, byte-compatible with huggingface_hub (indent 1, sorted keys).
  std::string to_cache_json() const;
  // Errors: kCorruptFile for bad JSON or an unknown format_version.
  static Result<RepoTree> from_cache_json(std::string_view commit, std::string_view text);
};

}  // namespace kernelhub::client
