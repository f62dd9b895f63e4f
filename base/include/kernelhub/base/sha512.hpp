// SHA-512 of a file (OpenSSL EVP), streamed in 1 MiB chunks: a metadata.json `digest` may name
// sha512 (kernels-data's DigestAlgorithm), though kernel-builder writes sha256.
//
// Thread safety: free functions.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>

#include "kernelhub/base/result.hpp"

namespace kernelhub {

using Sha512Digest = std::array<std::uint8_t, 64>;

// Errors: kNotFound, kIo.
Result<Sha512Digest> sha512_file(const std::filesystem::path& path);

std::string to_base64(const Sha512Digest& digest);

}  // namespace kernelhub
