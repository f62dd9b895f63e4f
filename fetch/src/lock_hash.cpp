// The `git_lfs_concat` variant hash of lock files, and the check of a variant directory against
// it (lockfile.hpp).
#include <algorithm>
#include <set>
#include <vector>

#include "kernelhub/base/internal/git_blob_sha1.hpp"
#include "kernelhub/base/internal/sha256.hpp"
#include "kernelhub/fetch/internal/lockfile.hpp"

namespace kernelhub {

namespace {

// Python bytecode is written by the interpreter next to the sources; it is never locked.
bool is_bytecode(std::string_view relative) {
  if (relative.size() >= 4 && relative.substr(relative.size() - 4) == ".pyc") return true;
  std::size_t start = 0;
  while (start <= relative.size()) {
    const std::size_t slash = std::min(relative.find('/', start), relative.size());
    if (relative.substr(start, slash - start) == "__pycache__") return true;
    start = slash + 1;
  }
  return false;
}

std::string hex_to_bytes(std::string_view hex) {
  std::string out;
  out.reserve(hex.size() / 2);
  auto nibble = [](char c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; };
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>((nibble(hex[i]) << 4) | nibble(hex[i + 1])));
  }
  return out;
}

struct LockedFile {
  std::string relative;  // below build/<variant>/
  const client::TreeEntry* entry;
};

// The lockable files of each variant under build/ (whatever its kind: whatever can be loaded is
// locked), sorted by relative path bytes.
std::map<std::string, std::vector<LockedFile>> lockable_files(const client::RepoTree& tree) {
  std::map<std::string, std::vector<LockedFile>> out;
  constexpr std::string_view kBuild = "build/";
  for (const auto& entry : tree.files) {
    const std::string_view path = entry.path;
    if (!path.starts_with(kBuild)) continue;
    const std::size_t slash = path.find('/', kBuild.size());
    if (slash == std::string_view::npos || slash + 1 >= path.size()) continue;  // a file directly in build/
    const std::string_view relative = path.substr(slash + 1);
    if (is_bytecode(relative)) continue;
    out[std::string(path.substr(kBuild.size(), slash - kBuild.size()))].push_back({std::string(relative), &entry});
  }
  for (auto& [variant, files] : out) {
    std::sort(files.begin(), files.end(),
              [](const LockedFile& a, const LockedFile& b) { return a.relative < b.relative; });
  }
  return out;
}

std::string concat_hash(const std::vector<LockedFile>& files) {
  Sha256 hash;
  for (const auto& file : files) {
    hash.update(file.relative);
    hash.update(hex_to_bytes(file.entry->etag()));
  }
  return "sha256-" + to_hex(hash.finish());
}

// The digest a tree entry's content must have, computed from the file on disk.
Result<std::string> content_digest(const std::filesystem::path& path, const client::TreeEntry& entry,
                                   FileDigests* digests) {
  if (!entry.is_lfs()) return digests != nullptr ? digests->git_sha1(path) : git_blob_sha1_file(path);
  KH_ASSIGN_OR_RETURN(Sha256Digest digest, sha256_file(path, digests));
  return to_hex(digest);
}

}  // namespace

std::map<std::string, std::string> variant_lock_hashes(const client::RepoTree& tree) {
  std::map<std::string, std::string> out;
  for (const auto& [variant, files] : lockable_files(tree)) out.emplace(variant, concat_hash(files));
  return out;
}

Status verify_variant_lock(const std::filesystem::path& variant_dir, const client::RepoTree& tree,
                           std::string_view variant, std::string_view expected, FileDigests* digests) {
  const auto all = lockable_files(tree);
  const auto listed = all.find(std::string(variant));
  if (listed == all.end()) {
    return unexpected(ErrorCode::kIntegrityMismatch, "the listing of commit " + tree.commit +
                                                         " has no files for variant `" + std::string(variant) +
                                                         "`, which the lock file hashes to " + std::string(expected));
  }
  const std::string actual = concat_hash(listed->second);
  if (actual != expected) {
    return unexpected(ErrorCode::kIntegrityMismatch,
                      "variant `" + std::string(variant) + "` at commit " + tree.commit + " hashes to " + actual +
                          " but the lock file says " + std::string(expected) +
                          ": the server's files differ from what was locked. Do not load it; if the change is "
                          "expected, run `kernelhub lock` again");
  }
  // The bytes on disk must be the ones listed: nothing missing, nothing added, nothing changed.
  std::vector<std::string> problems;
  std::set<std::string> on_disk;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(variant_dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_directory(ec)) continue;
    const std::string relative = it->path().lexically_relative(variant_dir).generic_string();
    if (is_bytecode(relative)) continue;
    if (!it->is_regular_file(ec)) {
      problems.push_back("`" + relative + "` is not a regular file");
      continue;
    }
    on_disk.insert(relative);
  }
  if (ec) return unexpected(ErrorCode::kIo, "cannot list `" + variant_dir.string() + "`: " + ec.message());
  for (const auto& file : listed->second) {
    if (on_disk.erase(file.relative) == 0) {
      problems.push_back("`" + file.relative + "` is missing");
      continue;
    }
    auto digest = content_digest(variant_dir / file.relative, *file.entry, digests);
    if (!digest) {
      problems.push_back(digest.error().message);
    } else if (*digest != file.entry->etag()) {
      problems.push_back("`" + file.relative + "` has digest " + *digest + ", the locked listing says " +
                         file.entry->etag());
    }
  }
  for (const auto& extra : on_disk) problems.push_back("`" + extra + "` is not in the locked listing");
  if (problems.empty()) return {};
  std::string message =
      "variant directory `" + variant_dir.string() + "` does not match the lock (commit " + tree.commit + "):";
  for (const auto& problem : problems) message += "\n  - " + problem;
  return unexpected(ErrorCode::kIntegrityMismatch, message + "\nDelete it from the cache and load again");
}

}  // namespace kernelhub
