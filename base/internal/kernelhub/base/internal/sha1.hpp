// SHA-1 (OpenSSL EVP), streamed, as 40 lower-case hex characters: git object ids and the
// server's stable ids. Not for security: nothing is trusted on a SHA-1 alone.
//
// Thread safety: free functions; a Sha1 object is used by one thread at a time.
#pragma once

#include <string>
#include <string_view>

#include "kernelhub/base/internal/streamed_digest.hpp"

namespace kernelhub {

class Sha1 : public StreamedDigest {
 public:
  Sha1() : StreamedDigest(Algorithm::kSha1) {}
  // 40 lower-case hex characters.
  std::string finish_hex();
};

std::string sha1_hex(std::string_view bytes);

}  // namespace kernelhub
