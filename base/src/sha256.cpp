#include "kernelhub/base/sha256.hpp"

#include "evp_digest.hpp"

namespace kernelhub {

struct Sha256::Context {
  detail::EvpDigest digest{EVP_sha256()};
};

Sha256::Sha256() : context_(std::make_unique<Context>()) {}
Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

void Sha256::update(const void* data, std::size_t size) {
  context_->digest.update(data, size);
}

Sha256Digest Sha256::finish() {
  std::uint8_t out[EVP_MAX_MD_SIZE];
  context_->digest.finish(out);
  Sha256Digest digest{};
  std::copy_n(out, digest.size(), digest.begin());
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
