// ZipArchive: the members of a ZIP file, read from its central directory and checked against
// each local header (PKWARE APPNOTE.TXT 4.3), without extracting or inflating anything.
//
// Strict on structure, so that a cut or doctored archive is refused before anything imports it:
// the end-of-central-directory record must end the file exactly (a truncated file loses it or
// cuts its comment), the central directory must sit right before it and hold exactly the entries
// it announces, and every member's local header must agree with its central entry (name, method)
// and its data must lie inside the file, before the central directory, without overlapping another
// member's. ZIP64, split archives and encrypted members are refused: a kernel's Python package
// never needs them. Nothing here judges the names; the caller does (fetch/zip_layout.hpp).
//
// Reads only the tail of the file and the local headers (with pread), never the members' data.
//
// Thread safety: value type; read() only reads the disk.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "kernelhub/base/result.hpp"

namespace kernelhub {

struct ZipMember {
  std::string name;          // as stored: `/`-separated, a trailing `/` for a directory entry
  std::uint16_t method = 0;  // 0 stored, 8 deflated, ...
  std::uint32_t crc32 = 0;
  std::uint64_t compressed_size = 0;
  std::uint64_t size = 0;
  std::uint64_t local_header_offset = 0;
  // The Unix st_mode from the external attributes when the archive was made on Unix, else 0
  // (a symlink member has S_IFLNK here; extracting tools would create a link).
  std::uint32_t unix_mode = 0;
  bool utf8_name = false;  // general purpose flag bit 11

  bool is_directory() const { return !name.empty() && name.back() == '/'; }
  bool is_symlink() const { return (unix_mode & 0170000) == 0120000; }
};

class ZipArchive {
 public:
  // Errors: kNotFound, kIo, kCorruptFile (says what is wrong with the archive and where).
  static Result<ZipArchive> read(const std::filesystem::path& path);

  // In central-directory order.
  const std::vector<ZipMember>& members() const { return members_; }
  std::uint64_t file_size() const { return file_size_; }

 private:
  std::vector<ZipMember> members_;
  std::uint64_t file_size_ = 0;
};

}  // namespace kernelhub
