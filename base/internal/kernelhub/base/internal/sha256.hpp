// SHA-256 over files and bytes (OpenSSL EVP), streamed: a file is read once, in chunks, and
// never held in memory whole.
//
// Thread safety: free functions; a Sha256 object is used by one thread at a time.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "kernelhub/base/internal/hex.hpp"  // to_hex(digest), which most users of a digest want
#include "kernelhub/base/internal/streamed_digest.hpp"
#include "kernelhub/base/result.hpp"

namespace kernelhub {

using Sha256Digest = std::array<std::uint8_t, 32>;

class Sha256 : public StreamedDigest {
 public:
  Sha256() : StreamedDigest(Algorithm::kSha256) {}
  Sha256Digest finish();
};

Sha256Digest sha256(std::string_view bytes);

// A file's SHA-256 and the number of bytes it covers: a manifest records both, and a separate
// stat could see another size if the file changed between the two. `git_sha1` is the file's git
// blob id (40 hex), when the same read computed it (file_digests.hpp says when), else empty.
struct FileHash {
  Sha256Digest digest{};
  std::uint64_t size = 0;
  std::string git_sha1;

  bool operator==(const FileHash&) const = default;
};

// Hashes a file in 1 MiB chunks. Errors: kNotFound, kIo.
Result<FileHash> hash_file(const std::filesystem::path& path);
Result<Sha256Digest> sha256_file(const std::filesystem::path& path);

}  // namespace kernelhub
