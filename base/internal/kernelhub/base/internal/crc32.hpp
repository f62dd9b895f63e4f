// CRC-32 (ISO-HDLC, the checksum of ZIP and gzip: reflected polynomial 0xEDB88320).
//
// Thread safety: free functions.
#pragma once

#include <cstdint>
#include <string_view>

namespace kernelhub {

// Continues `crc` (0 to start) over `bytes`: crc32(a + b) == crc32(b, crc32(a)).
std::uint32_t crc32(std::string_view bytes, std::uint32_t crc = 0);

}  // namespace kernelhub
