#include "kernelhub/base/file_digests.hpp"

#include <system_error>

#include "kernelhub/base/error.hpp"

namespace kernelhub {

Result<Sha256Digest> FileDigests::sha256(const std::filesystem::path& path) {
  std::error_code ec;
  const std::filesystem::path canonical = std::filesystem::canonical(path, ec);
  if (ec) return unexpected(os_error("cannot open `" + path.string() + "`", ec.value()));
  const std::uintmax_t size = std::filesystem::file_size(canonical, ec);
  if (ec) return unexpected(os_error("cannot stat `" + path.string() + "`", ec.value()));
  const auto modified = std::filesystem::last_write_time(canonical, ec);
  if (ec) return unexpected(os_error("cannot stat `" + path.string() + "`", ec.value()));
  if (auto it = entries_.find(canonical);
      it != entries_.end() && it->second.size == size && it->second.modified == modified) {
    return it->second.digest;
  }
  KH_ASSIGN_OR_RETURN(Sha256Digest digest, sha256_file(canonical));
  bytes_read_ += size;
  entries_.insert_or_assign(canonical, Entry{size, modified, digest});
  return digest;
}

Result<Sha256Digest> sha256_file(const std::filesystem::path& path, FileDigests* digests) {
  return digests != nullptr ? digests->sha256(path) : sha256_file(path);
}

}  // namespace kernelhub
