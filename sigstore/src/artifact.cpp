#include "kernelhub/sigstore/artifact.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "kernelhub/base/internal/hex.hpp"
#include "kernelhub/base/internal/sha256.hpp"

namespace kernelhub::sigstore {

Artifact Artifact::bytes(std::string data) {
  Artifact out;
  out.sha256_ = kernelhub::sha256(data);
  out.data_ = std::move(data);
  return out;
}

Result<Artifact> Artifact::sha256(std::string_view hex_digest) {
  std::string text(hex_digest);
  if (text.size() > 7 && text.compare(0, 7, "sha256:") == 0) text.erase(0, 7);
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  if (!is_lower_hex(text, 64)) {
    return unexpected(ErrorCode::kInvalidArgument, "`" + std::string(hex_digest.substr(0, 80)) +
                                                       "` is not a SHA-256 digest (`sha256:` and 64 hex digits)");
  }
  Sha256 digest{};
  for (std::size_t i = 0; i < digest.size(); ++i) {
    digest[i] = static_cast<std::uint8_t>(std::stoi(text.substr(2 * i, 2), nullptr, 16));
  }
  return sha256(digest);
}

Artifact Artifact::sha256(const Sha256& digest) {
  Artifact out;
  out.sha256_ = digest;
  return out;
}

std::string Artifact::sha256_hex() const {
  return to_hex(sha256_);
}

}  // namespace kernelhub::sigstore
