// Test helpers: builds CUDA fatbinary bytes field by field (layout in kernelhub/binary_format/internal/fatbin.hpp), so
// tests can write valid, truncated and lying containers without nvcc.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace kernelhub::binary_format::testing {

struct FatbinEntrySpec {
  std::uint16_t kind = 2;  // 1 = PTX, 2 = ELF
  std::uint32_t arch = 90;
  std::uint64_t flags = 0x11;  // 64-bit, Linux
  std::uint16_t major = 1;
  std::uint16_t minor = 8;
  std::uint32_t header_size = 64;
  std::string payload = std::string(24, 'x');
  std::uint32_t compressed_size = 0;
  std::uint64_t uncompressed_size = 0;
  // When set, written instead of payload.size() (a lying header).
  std::uint64_t payload_size_override = 0;
};

template <typename T>
void put(std::string& out, std::size_t offset, T value) {
  if (out.size() < offset + sizeof(T)) out.resize(offset + sizeof(T), '\0');
  std::memcpy(out.data() + offset, &value, sizeof(T));
}

inline std::string fatbin_entry(const FatbinEntrySpec& e) {
  // A header that claims less than 64 or more than 256 bytes is a lie: write 64.
  std::string out(e.header_size < 64 || e.header_size > 256 ? 64 : e.header_size, '\0');
  put<std::uint16_t>(out, 0, e.kind);
  put<std::uint16_t>(out, 2, 0x0101);
  put<std::uint32_t>(out, 4, e.header_size);
  put<std::uint64_t>(out, 8, e.payload_size_override != 0 ? e.payload_size_override : e.payload.size());
  put<std::uint32_t>(out, 16, e.compressed_size);
  put<std::uint16_t>(out, 24, e.minor);
  put<std::uint16_t>(out, 26, e.major);
  put<std::uint32_t>(out, 28, e.arch);
  put<std::uint64_t>(out, 40, e.flags);
  put<std::uint64_t>(out, 56, e.uncompressed_size);
  return out + e.payload;
}

// One fatbin: the 16-byte header, then the entries. `entries_size_override` lies about their size.
inline std::string fatbin(const std::vector<FatbinEntrySpec>& entries, std::uint64_t entries_size_override = 0,
                          std::uint32_t magic = 0xBA55ED50, std::uint16_t version = 1, std::uint16_t header_size = 16) {
  std::string body;
  for (const auto& e : entries) body += fatbin_entry(e);
  std::string out(16, '\0');
  put<std::uint32_t>(out, 0, magic);
  put<std::uint16_t>(out, 4, version);
  put<std::uint16_t>(out, 6, header_size);
  put<std::uint64_t>(out, 8, entries_size_override != 0 ? entries_size_override : body.size());
  if (header_size > 16 && header_size <= 256) out.resize(header_size, '\0');
  return out + body;
}

}  // namespace kernelhub::binary_format::testing
