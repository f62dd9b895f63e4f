#include "digest_text.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "kernelhub/base/internal/hex.hpp"

namespace kernelhub::server {

std::string hmac_hex(std::string_view key, std::string_view message) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(message.data()),
       message.size(), out, &size);
  return to_hex(std::span<const std::uint8_t>(out, 16));
}

bool is_hex(std::string_view s) {
  return !s.empty() && is_lower_hex(s, s.size());
}

bool is_sha256_hex(std::string_view s) {
  return is_lower_hex(s, 64);
}

}  // namespace kernelhub::server
