#include "kernelhub/base/file_digests.hpp"

#include <system_error>

#include "kernelhub/base/error.hpp"

namespace kernelhub {

Result<FileHash> FileDigests::hash(const std::filesystem::path& path) {
  std::error_code ec;
  const std::filesystem::path canonical = std::filesystem::canonical(path, ec);
  if (ec) return unexpected(os_error("cannot open `" + path.string() + "`", ec.value()));
  const std::uintmax_t size = std::filesystem::file_size(canonical, ec);
  if (ec) return unexpected(os_error("cannot stat `" + path.string() + "`", ec.value()));
  const auto modified = std::filesystem::last_write_time(canonical, ec);
  if (ec) return unexpected(os_error("cannot stat `" + path.string() + "`", ec.value()));
  if (auto it = entries_.find(canonical);
      it != entries_.end() && it->second.hash.size == size && it->second.modified == modified) {
    return it->second.hash;
  }
  KH_ASSIGN_OR_RETURN(FileHash hash, hash_file(canonical));
  bytes_read_ += hash.size;
  entries_.insert_or_assign(canonical, Entry{modified, hash});
  return hash;
}

Result<Sha256Digest> FileDigests::sha256(const std::filesystem::path& path) {
  KH_ASSIGN_OR_RETURN(FileHash hash, this->hash(path));
  return hash.digest;
}

Result<Sha256Digest> sha256_file(const std::filesystem::path& path, FileDigests* digests) {
  return digests != nullptr ? digests->sha256(path) : sha256_file(path);
}

Result<FileHash> hash_file(const std::filesystem::path& path, FileDigests* digests) {
  return digests != nullptr ? digests->hash(path) : hash_file(path);
}

}  // namespace kernelhub
