#include "kernelhub/base/sha1.hpp"

#include "evp_digest.hpp"
#include "kernelhub/base/hex.hpp"

namespace kernelhub {

struct Sha1::Context {
  detail::EvpDigest digest{EVP_sha1()};
};

Sha1::Sha1() : context_(std::make_unique<Context>()) {}
Sha1::~Sha1() = default;
Sha1::Sha1(Sha1&&) noexcept = default;
Sha1& Sha1::operator=(Sha1&&) noexcept = default;

void Sha1::update(const void* data, std::size_t size) {
  context_->digest.update(data, size);
}

std::string Sha1::finish_hex() {
  std::uint8_t out[EVP_MAX_MD_SIZE];
  const std::size_t size = context_->digest.finish(out);
  return to_hex(std::span<const std::uint8_t>(out, size));
}

std::string sha1_hex(std::string_view bytes) {
  Sha1 hasher;
  hasher.update(bytes);
  return hasher.finish_hex();
}

}  // namespace kernelhub
