// Digests as text on the wire: the HMAC that signs storage URLs, and the hex forms of ids the
// server accepts. (SHA-1 and git blob ids are base's: kernelhub/base/internal/sha1.hpp, git_blob_sha1.hpp.)
#pragma once

#include <string>
#include <string_view>

namespace kernelhub::server {

// HMAC-SHA256(key, message) as hex, truncated to 32 characters (128 bits): signs storage URLs.
std::string hmac_hex(std::string_view key, std::string_view message);

// Lower-case hex of any non-zero length (an abbreviated commit, a part's ETag).
bool is_hex(std::string_view s);
bool is_sha256_hex(std::string_view s);  // 64 lower-case hex

}  // namespace kernelhub::server
