// SHA-512 of a file, streamed in 1 MiB chunks (a StreamedDigest): a metadata.json `digest` may name
// sha512 (kernels-data's DigestAlgorithm), though kernel-builder writes sha256.
//
// Thread safety: free functions.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>

#include "kernelhub/base/internal/streamed_digest.hpp"
#include "kernelhub/base/result.hpp"

namespace kernelhub {

using Sha512Digest = std::array<std::uint8_t, 64>;

class Sha512 : public StreamedDigest {
 public:
  Sha512() : StreamedDigest(Algorithm::kSha512) {}
  Sha512Digest finish();
};

// Errors: kNotFound, kIo.
Result<Sha512Digest> sha512_file(const std::filesystem::path& path);

}  // namespace kernelhub
