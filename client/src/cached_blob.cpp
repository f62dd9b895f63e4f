#include "kernelhub/client/internal/cached_blob.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <map>

#include "kernelhub/base/internal/hex.hpp"
#include "kernelhub/base/internal/sha256.hpp"
#include "kernelhub/client/internal/cache_layout.hpp"

namespace kernelhub::client {

Result<std::optional<std::string>> blob_content_changed(const std::filesystem::path& file, std::string_view etag,
                                                        FileDigests* digests) {
  FileDigests local;
  FileDigests& use = digests != nullptr ? *digests : local;
  std::string found;
  if (is_lower_hex(etag, 64)) {
    KH_ASSIGN_OR_RETURN(Sha256Digest sha256, use.sha256(file));
    found = to_hex(sha256);
  } else if (is_lower_hex(etag, 40)) {
    KH_ASSIGN_OR_RETURN(found, use.git_sha1(file));
  } else {
    return unexpected(ErrorCode::kInvalidArgument, "`" + std::string(etag) +
                                                       "` is neither a sha256 nor a git blob sha1: cannot check `" +
                                                       file.string() + "` against it");
  }
  if (found == etag) return std::optional<std::string>();
  return std::optional<std::string>(std::move(found));
}

std::string changed_in_cache(const ChangedBlob& changed, const std::string& what) {
  const std::string name = changed.blob.filename().string();
  return what + " changed in the cache: its blob " + name + " (`" + changed.blob.string() + "`) now hashes to " +
         changed.found + ", not to its name";
}

Result<RepoCacheCheck> check_cached_repo(const std::filesystem::path& repo_dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(repo_dir, ec)) {
    return unexpected(ErrorCode::kNotFound, "`" + repo_dir.string() + "` is not a cached repo folder");
  }
  RepoCacheCheck out;
  // Which snapshot files link to which blob, and which links lead nowhere.
  std::map<std::string, std::vector<SnapshotFile>> users;
  const fs::path snapshots = CacheLayout::snapshots_dir_of(repo_dir);
  for (fs::directory_iterator commits(snapshots, ec), end; !ec && commits != end; commits.increment(ec)) {
    const fs::path root = commits->path();
    std::error_code walk_ec;
    for (fs::recursive_directory_iterator it(root, walk_ec), stop; !walk_ec && it != stop; it.increment(walk_ec)) {
      std::error_code link_ec;
      if (!it->is_symlink(link_ec)) continue;
      SnapshotFile file{root.filename().string(), it->path().lexically_relative(root).generic_string()};
      struct stat st {};
      if (::stat(it->path().c_str(), &st) != 0) {
        out.missing.push_back(std::move(file));
        continue;
      }
      users[fs::read_symlink(it->path(), link_ec).filename().string()].push_back(std::move(file));
    }
  }
  const fs::path blobs = CacheLayout::blobs_dir_of(repo_dir);
  std::vector<fs::path> names;
  for (fs::directory_iterator it(blobs, ec), end; !ec && it != end; it.increment(ec)) names.push_back(it->path());
  std::sort(names.begin(), names.end());
  for (const fs::path& blob : names) {
    const std::string name = blob.filename().string();
    if (name.ends_with(".incomplete")) {
      out.partial.push_back(blob);
      continue;
    }
    if (!is_lower_hex(name, 64) && !is_lower_hex(name, 40)) continue;  // not a blob of ours
    KH_ASSIGN_OR_RETURN(std::optional<std::string> found, blob_content_changed(blob, name));
    ++out.blobs;
    out.bytes += fs::file_size(blob, ec);
    if (!found) continue;
    auto used = users.find(name);
    out.changed.push_back(
        {ChangedBlob{"", blob, *found}, used == users.end() ? std::vector<SnapshotFile>() : std::move(used->second)});
  }
  return out;
}

}  // namespace kernelhub::client
