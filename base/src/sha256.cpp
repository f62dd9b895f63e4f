#include "kernelhub/base/internal/sha256.hpp"

#include "file_chunks.hpp"

namespace kernelhub {

Sha256Digest Sha256::finish() {
  Sha256Digest digest{};
  finish_into(digest.data());
  return digest;
}

Sha256Digest sha256(std::string_view bytes) {
  Sha256 hasher;
  hasher.update(bytes);
  return hasher.finish();
}

Result<FileHash> hash_file(const std::filesystem::path& path) {
  Sha256 hasher;
  KH_ASSIGN_OR_RETURN(const std::uint64_t size, detail::read_file_chunks(
                                                    path, [](std::uint64_t) {},
                                                    [&](const char* data, std::size_t n) { hasher.update(data, n); }));
  return FileHash{hasher.finish(), size};
}

Result<Sha256Digest> sha256_file(const std::filesystem::path& path) {
  KH_ASSIGN_OR_RETURN(FileHash hash, hash_file(path));
  return hash.digest;
}

}  // namespace kernelhub
