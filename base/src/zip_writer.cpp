#include "kernelhub/base/internal/zip_writer.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "kernelhub/base/internal/crc32.hpp"

namespace kernelhub {

namespace {

constexpr std::uint16_t kVersion = 20;                            // 2.0: stored members, directories
constexpr std::uint16_t kMadeByUnix = (3 << 8) | kVersion;        // so that readers take the mode below
constexpr std::uint16_t kDosEpochDate = (0 << 9) | (1 << 5) | 1;  // 1980-01-01
constexpr std::uint32_t kRegularFile0644 = 0100644u << 16;
constexpr std::uint16_t kUtf8Names = 0x0800;

void put16(std::string& out, std::uint16_t v) {
  out.push_back(static_cast<char>(v & 0xFF));
  out.push_back(static_cast<char>(v >> 8));
}

void put32(std::string& out, std::uint32_t v) {
  put16(out, static_cast<std::uint16_t>(v & 0xFFFF));
  put16(out, static_cast<std::uint16_t>(v >> 16));
}

bool is_ascii(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

}  // namespace

Result<std::string> write_zip(std::vector<ZipInput> members) {
  std::sort(members.begin(), members.end(), [](const ZipInput& a, const ZipInput& b) { return a.name < b.name; });
  if (members.size() > 0xFFFE) {
    return unexpected(ErrorCode::kInvalidArgument, std::to_string(members.size()) + " files are too many for a ZIP");
  }
  constexpr std::uint64_t kLimit = std::numeric_limits<std::uint32_t>::max();
  std::string out;
  std::string directory;
  for (std::size_t i = 0; i < members.size(); ++i) {
    const ZipInput& m = members[i];
    if (m.name.empty() || m.name.size() > 0xFFFF || (i > 0 && members[i - 1].name == m.name)) {
      return unexpected(ErrorCode::kInvalidArgument, "`" + m.name.substr(0, 200) +
                                                         "` cannot name a ZIP member (empty, over 65535 bytes "
                                                         "or given twice)");
    }
    if (out.size() + m.bytes.size() + m.name.size() + 30 > kLimit) {
      return unexpected(ErrorCode::kInvalidArgument, "the archive would exceed 4 GiB at `" + m.name + "`");
    }
    const std::uint32_t crc = crc32(m.bytes);
    const auto size = static_cast<std::uint32_t>(m.bytes.size());
    const auto offset = static_cast<std::uint32_t>(out.size());
    const std::uint16_t flags = is_ascii(m.name) ? 0 : kUtf8Names;
    // Local header (APPNOTE 4.3.7).
    put32(out, 0x04034b50);
    put16(out, kVersion);
    put16(out, flags);
    put16(out, 0);  // stored
    put16(out, 0);  // 00:00:00
    put16(out, kDosEpochDate);
    put32(out, crc);
    put32(out, size);
    put32(out, size);
    put16(out, static_cast<std::uint16_t>(m.name.size()));
    put16(out, 0);
    out += m.name;
    out += m.bytes;
    // Central directory entry (APPNOTE 4.3.12).
    put32(directory, 0x02014b50);
    put16(directory, kMadeByUnix);
    put16(directory, kVersion);
    put16(directory, flags);
    put16(directory, 0);
    put16(directory, 0);
    put16(directory, kDosEpochDate);
    put32(directory, crc);
    put32(directory, size);
    put32(directory, size);
    put16(directory, static_cast<std::uint16_t>(m.name.size()));
    put16(directory, 0);  // extra
    put16(directory, 0);  // comment
    put16(directory, 0);  // disk
    put16(directory, 0);  // internal attributes
    put32(directory, kRegularFile0644);
    put32(directory, offset);
    directory += m.name;
  }
  if (out.size() + directory.size() + 22 > kLimit) {
    return unexpected(ErrorCode::kInvalidArgument, "the archive would exceed 4 GiB");
  }
  const auto directory_offset = static_cast<std::uint32_t>(out.size());
  out += directory;
  // End of central directory (APPNOTE 4.3.16).
  put32(out, 0x06054b50);
  put16(out, 0);
  put16(out, 0);
  put16(out, static_cast<std::uint16_t>(members.size()));
  put16(out, static_cast<std::uint16_t>(members.size()));
  put32(out, static_cast<std::uint32_t>(directory.size()));
  put32(out, directory_offset);
  put16(out, 0);
  return out;
}

}  // namespace kernelhub
