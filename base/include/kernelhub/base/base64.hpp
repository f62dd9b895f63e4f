// Standard base64 (RFC 4648, with padding), as metadata.json digests write their hashes.
//
// Thread safety: a pure function.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace kernelhub {

std::string base64_encode(std::span<const std::uint8_t> bytes);

}  // namespace kernelhub
