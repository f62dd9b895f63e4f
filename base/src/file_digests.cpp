#include "kernelhub/base/file_digests.hpp"

#include <system_error>

#include "kernelhub/base/error.hpp"

namespace kernelhub {

Result<FileHash> FileDigests::hash(const std::filesystem::path& path) {
  std::error_code ec;
  const std::filesystem::path canonical = std::filesystem::canonical(path, ec);
  if (ec) return unexpected(os_error("cannot open `" + path.string() + "`", ec.value()));
  KH_ASSIGN_OR_RETURN(FileStamp stamp, FileStamp::of(canonical));
  if (auto it = used_.find(canonical); it != used_.end() && it->second.stamp == stamp) return it->second.hash;
  if (auto it = known_.find(canonical); it != known_.end() && it->second.stamp == stamp) {
    used_.insert_or_assign(canonical, it->second);
    return it->second.hash;
  }
  KH_ASSIGN_OR_RETURN(FileHash hash, hash_file(canonical));
  bytes_read_ += hash.size;
  // Stat again after the read: a file that changed while it was read keeps no entry that could
  // vouch for its new content.
  KH_ASSIGN_OR_RETURN(FileStamp after, FileStamp::of(canonical));
  if (after == stamp && after.size == hash.size) used_.insert_or_assign(canonical, Entry{stamp, hash});
  return hash;
}

Result<Sha256Digest> FileDigests::sha256(const std::filesystem::path& path) {
  KH_ASSIGN_OR_RETURN(FileHash hash, this->hash(path));
  return hash.digest;
}

void FileDigests::remember(const std::filesystem::path& canonical, const Entry& entry) {
  known_.insert_or_assign(canonical, entry);
}

Result<Sha256Digest> sha256_file(const std::filesystem::path& path, FileDigests* digests) {
  return digests != nullptr ? digests->sha256(path) : sha256_file(path);
}

Result<FileHash> hash_file(const std::filesystem::path& path, FileDigests* digests) {
  return digests != nullptr ? digests->hash(path) : hash_file(path);
}

}  // namespace kernelhub
