#include "kernelhub/base/internal/zip_archive.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <string_view>

#include "kernelhub/base/internal/unique_fd.hpp"

namespace kernelhub {

namespace {

constexpr std::uint32_t kLocalHeaderSignature = 0x04034b50;
constexpr std::uint32_t kCentralEntrySignature = 0x02014b50;
constexpr std::uint32_t kEndSignature = 0x06054b50;
constexpr std::uint32_t kZip64LocatorSignature = 0x07064b50;
constexpr std::size_t kEndSize = 22;
constexpr std::size_t kCentralEntrySize = 46;
constexpr std::size_t kLocalHeaderSize = 30;
constexpr std::size_t kZip64LocatorSize = 20;
constexpr std::size_t kMaxComment = 0xFFFF;
// A kernel's Python package has a handful of files; this bounds what a hostile directory costs.
constexpr std::uint64_t kMaxCentralDirectory = 64u << 20;

std::uint16_t u16(std::string_view b, std::size_t at) {
  return static_cast<std::uint16_t>(static_cast<std::uint8_t>(b[at]) | static_cast<std::uint8_t>(b[at + 1]) << 8);
}

std::uint32_t u32(std::string_view b, std::size_t at) {
  return static_cast<std::uint32_t>(u16(b, at)) | static_cast<std::uint32_t>(u16(b, at + 2)) << 16;
}

class Reader {
 public:
  Reader(UniqueFd fd, std::filesystem::path path) : fd_(std::move(fd)), path_(std::move(path)) {}

  // Exactly `size` bytes at `offset`; fewer means the file ends there.
  Result<std::string> at(std::uint64_t offset, std::size_t size) const {
    std::string out(size, '\0');
    std::size_t done = 0;
    while (done < size) {
      const ssize_t n = ::pread(fd_.get(), out.data() + done, size - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return unexpected(os_error("cannot read `" + path_.string() + "`", errno));
      if (n == 0) break;
      done += static_cast<std::size_t>(n);
    }
    out.resize(done);
    return out;
  }

  Unexpected corrupt(const std::string& why) const {
    return unexpected(ErrorCode::kCorruptFile,
                      "`" + path_.string() + "` is not a readable ZIP archive: " + why +
                          ". The file was cut short or damaged (download it again) or was not written by a ZIP tool");
  }

 private:
  UniqueFd fd_;
  std::filesystem::path path_;
};

struct End {
  std::uint64_t position = 0;  // of the end-of-central-directory record
  std::uint16_t entries = 0;
  std::uint32_t directory_size = 0;
  std::uint32_t directory_offset = 0;
};

// The end-of-central-directory record whose comment runs exactly to the end of the file.
Result<End> find_end(const Reader& reader, std::uint64_t file_size) {
  if (file_size < kEndSize) {
    return reader.corrupt("it is " + std::to_string(file_size) + " bytes, shorter than an empty archive");
  }
  const std::uint64_t window = std::min<std::uint64_t>(file_size, kEndSize + kMaxComment);
  KH_ASSIGN_OR_RETURN(std::string tail, reader.at(file_size - window, static_cast<std::size_t>(window)));
  if (tail.size() != window) return reader.corrupt("the file shrank while it was read");
  for (std::size_t at = tail.size() - kEndSize + 1; at-- > 0;) {
    if (u32(tail, at) != kEndSignature || at + kEndSize + u16(tail, at + 20) != tail.size()) continue;
    End end;
    end.position = file_size - window + at;
    end.entries = u16(tail, at + 10);
    end.directory_size = u32(tail, at + 12);
    end.directory_offset = u32(tail, at + 16);
    if (end.entries == 0xFFFF || u16(tail, at + 8) == 0xFFFF || end.directory_size == 0xFFFFFFFF ||
        end.directory_offset == 0xFFFFFFFF ||
        (at >= kZip64LocatorSize && u32(tail, at - kZip64LocatorSize) == kZip64LocatorSignature)) {
      return reader.corrupt("it is a ZIP64 archive, which a kernel's Python package never needs");
    }
    if (u16(tail, at + 4) != 0 || u16(tail, at + 6) != 0 || u16(tail, at + 8) != end.entries) {
      return reader.corrupt("it is split across several disks");
    }
    return end;
  }
  return reader.corrupt("no end-of-central-directory record ends the file");
}

std::string member_label(const std::string& name) {
  std::string shown;
  for (const char c : name.substr(0, 200)) shown += (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) ? '?' : c;
  return "member `" + shown + "`";
}

// Reads one central entry at `at` of `directory`; advances `at`.
Result<ZipMember> central_entry(const Reader& reader, std::string_view directory, std::size_t& at) {
  if (directory.size() - at < kCentralEntrySize || u32(directory, at) != kCentralEntrySignature) {
    return reader.corrupt("the central directory is cut or damaged at byte " + std::to_string(at) + " of it");
  }
  const std::uint16_t made_by = u16(directory, at + 4);
  const std::uint16_t flags = u16(directory, at + 8);
  ZipMember m;
  m.method = u16(directory, at + 10);
  m.crc32 = u32(directory, at + 16);
  m.compressed_size = u32(directory, at + 20);
  m.size = u32(directory, at + 24);
  const std::size_t name_size = u16(directory, at + 28);
  const std::size_t variable = name_size + u16(directory, at + 30) + u16(directory, at + 32);
  const std::uint32_t external = u32(directory, at + 38);
  m.local_header_offset = u32(directory, at + 42);
  if (directory.size() - at - kCentralEntrySize < variable) {
    return reader.corrupt("the central directory is cut inside an entry");
  }
  m.name = std::string(directory.substr(at + kCentralEntrySize, name_size));
  m.utf8_name = (flags & 0x0800) != 0;
  if ((made_by >> 8) == 3) m.unix_mode = external >> 16;  // 3: made on Unix
  if ((flags & 0x0001) != 0) return reader.corrupt(member_label(m.name) + " is encrypted");
  if (u16(directory, at + 34) != 0) return reader.corrupt(member_label(m.name) + " starts on another disk");
  at += kCentralEntrySize + variable;
  return m;
}

// The member's local header agrees with its central entry; returns where its data ends (with a
// data descriptor when flag bit 3 says one follows).
Result<std::uint64_t> check_local_header(const Reader& reader, const ZipMember& m, std::uint64_t data_limit) {
  if (m.local_header_offset + kLocalHeaderSize > data_limit) {
    return reader.corrupt(member_label(m.name) + "'s local header lies outside the archive's data");
  }
  KH_ASSIGN_OR_RETURN(std::string header, reader.at(m.local_header_offset, kLocalHeaderSize));
  if (header.size() != kLocalHeaderSize || u32(header, 0) != kLocalHeaderSignature) {
    return reader.corrupt(member_label(m.name) + " has no local header where the central directory says");
  }
  const std::uint16_t flags = u16(header, 6);
  const std::size_t name_size = u16(header, 26);
  const std::size_t extra_size = u16(header, 28);
  KH_ASSIGN_OR_RETURN(std::string name, reader.at(m.local_header_offset + kLocalHeaderSize, name_size));
  if (name != m.name || u16(header, 8) != m.method) {
    return reader.corrupt(member_label(m.name) + "'s local header names another file or method than its central entry");
  }
  std::uint64_t end = m.local_header_offset + kLocalHeaderSize + name_size + extra_size + m.compressed_size;
  if ((flags & 0x0008) != 0) end += 12;  // crc, sizes; an optional signature is not required
  if (end > data_limit) {
    return reader.corrupt(member_label(m.name) + "'s data runs past the end of the archive's data (byte " +
                          std::to_string(end) + " of " + std::to_string(data_limit) + ")");
  }
  return end;
}

}  // namespace

Result<ZipArchive> ZipArchive::read(const std::filesystem::path& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return unexpected(os_error("cannot open `" + path.string() + "`", errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return unexpected(os_error("cannot stat `" + path.string() + "`", errno));
  if (!S_ISREG(st.st_mode)) {
    return unexpected(ErrorCode::kCorruptFile, "`" + path.string() + "` is not a regular file");
  }
  const Reader reader(std::move(fd), path);
  ZipArchive archive;
  archive.file_size_ = static_cast<std::uint64_t>(st.st_size);
  KH_ASSIGN_OR_RETURN(End end, find_end(reader, archive.file_size_));
  if (static_cast<std::uint64_t>(end.directory_offset) + end.directory_size != end.position) {
    return reader.corrupt("the central directory (" + std::to_string(end.directory_size) + " bytes at " +
                          std::to_string(end.directory_offset) + ") does not end where its end record starts (" +
                          std::to_string(end.position) + ")");
  }
  if (end.directory_size > kMaxCentralDirectory) {
    return reader.corrupt("its central directory is " + std::to_string(end.directory_size) + " bytes");
  }
  KH_ASSIGN_OR_RETURN(std::string directory, reader.at(end.directory_offset, end.directory_size));
  if (directory.size() != end.directory_size) return reader.corrupt("the file shrank while it was read");
  std::size_t at = 0;
  while (at < directory.size()) {
    KH_ASSIGN_OR_RETURN(ZipMember member, central_entry(reader, directory, at));
    archive.members_.push_back(std::move(member));
  }
  if (archive.members_.size() != end.entries) {
    return reader.corrupt("its central directory holds " + std::to_string(archive.members_.size()) +
                          " entries, its end record announces " + std::to_string(end.entries));
  }
  // Local headers in file order: each inside the data part, none overlapping the one before.
  std::vector<const ZipMember*> by_offset;
  for (const ZipMember& m : archive.members_) by_offset.push_back(&m);
  std::sort(by_offset.begin(), by_offset.end(),
            [](const ZipMember* a, const ZipMember* b) { return a->local_header_offset < b->local_header_offset; });
  std::uint64_t previous_end = 0;
  for (const ZipMember* m : by_offset) {
    if (m->local_header_offset < previous_end) {
      return reader.corrupt(member_label(m->name) + " overlaps the member before it");
    }
    KH_ASSIGN_OR_RETURN(previous_end, check_local_header(reader, *m, end.directory_offset));
  }
  return archive;
}

}  // namespace kernelhub
