#include "kernelhub/binary_format/internal/fatbin.hpp"

#include "mapped_file.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "kernelhub/binary_format/internal/elf_file.hpp"

namespace kernelhub::binary_format {

namespace {

constexpr std::uint32_t kFatbinMagic = 0xBA55ED50;
constexpr std::uint16_t kFatbinVersion = 1;
constexpr std::uint64_t kFatbinHeaderSize = 16;
constexpr std::uint64_t kEntryHeaderSize = 64;  // the fields below; nvcc 13 writes 64, 80, 96 or 112

constexpr std::uint16_t kKindPtx = 1;
constexpr std::uint16_t kKindElf = 2;
constexpr std::uint16_t kKindLegacyCubin = 4;

constexpr std::uint64_t kFlagCompressedMask = 0x1000 | 0x2000 | 0x8000;
constexpr std::uint64_t kFlagArchSpecific = 0x100000;
constexpr std::uint64_t kFlagFamily = 0x200000;

constexpr int kMinSm = 10;
constexpr int kMaxSm = 999;

// Offsets inside an entry header.
constexpr std::uint64_t kEntryKind = 0, kEntryHeaderSizeField = 4, kEntryPayloadSize = 8, kEntryCompressedSize = 16,
                        kEntryMinor = 24, kEntryMajor = 26, kEntryArch = 28, kEntryFlags = 40,
                        kEntryUncompressedSize = 56;

Unexpected corrupt(std::uint64_t offset, const std::string& why) {
  return unexpected(ErrorCode::kCorruptFile,
                    "not a valid CUDA fatbinary: " + why + " (at byte " + std::to_string(offset) + " of the section)");
}

// Little-endian read of a T at `offset`. REQUIRES: offset + sizeof(T) <= bytes.size().
template <typename T>
T load(std::string_view bytes, std::uint64_t offset) {
  T value{};
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

std::string hex(std::uint64_t value) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  do {
    out.insert(out.begin(), kDigits[value & 0xf]);
    value >>= 4;
  } while (value != 0);
  return "0x" + out;
}

// Reads the entries of the fatbin whose entries span [begin, end) of `bytes`.
Status read_entries(std::string_view bytes, std::uint64_t begin, std::uint64_t end, std::vector<FatbinEntry>& out) {
  std::uint64_t p = begin;
  while (p < end) {
    if (end - p < kEntryHeaderSize) {
      return corrupt(p, "an entry header is truncated (" + std::to_string(end - p) + " bytes left)");
    }
    const auto kind = load<std::uint16_t>(bytes, p + kEntryKind);
    const auto header_size = std::uint64_t{load<std::uint32_t>(bytes, p + kEntryHeaderSizeField)};
    const auto payload_size = load<std::uint64_t>(bytes, p + kEntryPayloadSize);
    const auto compressed_size = std::uint64_t{load<std::uint32_t>(bytes, p + kEntryCompressedSize)};
    const auto minor = load<std::uint16_t>(bytes, p + kEntryMinor);
    const auto major = load<std::uint16_t>(bytes, p + kEntryMajor);
    const auto arch = load<std::uint32_t>(bytes, p + kEntryArch);
    const auto flags = load<std::uint64_t>(bytes, p + kEntryFlags);
    const auto uncompressed_size = load<std::uint64_t>(bytes, p + kEntryUncompressedSize);

    if (header_size < kEntryHeaderSize || header_size > end - p) {
      return corrupt(p, "an entry header claims " + std::to_string(header_size) + " bytes; " + std::to_string(end - p) +
                            " are left and at least 64 are needed");
    }
    if (payload_size > end - p - header_size) {
      return corrupt(p, "an entry claims " + std::to_string(payload_size) + " payload bytes; only " +
                            std::to_string(end - p - header_size) + " are left in its fatbin");
    }
    resolver::CudaCodeKind code_kind;
    if (kind == kKindPtx) {
      code_kind = resolver::CudaCodeKind::kPtx;
    } else if (kind == kKindElf || kind == kKindLegacyCubin) {
      code_kind = resolver::CudaCodeKind::kSass;
    } else {
      return corrupt(p, "unknown entry kind " + std::to_string(kind) + " (expected 1 = PTX or 2 = ELF)");
    }
    if (arch < kMinSm || arch > kMaxSm) {
      return corrupt(p, "entry arch " + std::to_string(arch) + " is not an SM number");
    }
    if ((flags & kFlagArchSpecific) != 0 && (flags & kFlagFamily) != 0) {
      return corrupt(p, "an entry is flagged both arch-specific (a) and family (f): flags " + hex(flags));
    }
    const bool compressed = (flags & kFlagCompressedMask) != 0;
    if (compressed && (compressed_size == 0 || compressed_size > payload_size || uncompressed_size == 0)) {
      return corrupt(p, "a compressed entry claims " + std::to_string(compressed_size) + " compressed bytes in a " +
                            std::to_string(payload_size) + "-byte payload, " + std::to_string(uncompressed_size) +
                            " uncompressed");
    }

    FatbinEntry entry;
    const auto suffix = (flags & kFlagArchSpecific) != 0 ? resolver::CudaArchSuffix::kArchSpecific
                        : (flags & kFlagFamily) != 0     ? resolver::CudaArchSuffix::kFamily
                                                         : resolver::CudaArchSuffix::kNone;
    entry.target = resolver::CudaTarget::from_sm(code_kind, static_cast<int>(arch), suffix);
    if (code_kind == resolver::CudaCodeKind::kPtx && major != 0) entry.target.ptx_isa = resolver::Version{major, minor};
    entry.compressed = compressed;
    entry.size = compressed ? compressed_size : payload_size;
    entry.uncompressed_size = compressed ? uncompressed_size : payload_size;
    entry.flags = flags;
    out.push_back(std::move(entry));
    p += header_size + payload_size;  // >= 64: always forward
  }
  return {};
}

}  // namespace

Result<std::vector<FatbinEntry>> Fatbin::parse(std::string_view section) {
  std::vector<FatbinEntry> entries;
  std::uint64_t pos = 0;
  const std::uint64_t size = section.size();
  while (pos < size) {
    // Alignment padding between fatbins; the magic's first byte is not zero.
    if (section[pos] == '\0') {
      ++pos;
      continue;
    }
    if (size - pos < kFatbinHeaderSize) {
      return corrupt(pos, "the fatbin header is truncated (" + std::to_string(size - pos) + " bytes left)");
    }
    const auto magic = load<std::uint32_t>(section, pos);
    const auto version = load<std::uint16_t>(section, pos + 4);
    const auto header_size = std::uint64_t{load<std::uint16_t>(section, pos + 6)};
    const auto entries_size = load<std::uint64_t>(section, pos + 8);
    if (magic != kFatbinMagic) {
      return corrupt(pos, "expected the fatbin magic 0xba55ed50, found " + hex(magic));
    }
    if (version != kFatbinVersion) {
      return corrupt(pos, "unsupported fatbin version " + std::to_string(version) + " (expected 1)");
    }
    if (header_size < kFatbinHeaderSize || header_size > size - pos) {
      return corrupt(pos, "the fatbin header claims " + std::to_string(header_size) + " bytes");
    }
    if (entries_size > size - pos - header_size) {
      return corrupt(pos, "the fatbin claims " + std::to_string(entries_size) + " bytes of entries; only " +
                              std::to_string(size - pos - header_size) + " are left in the section");
    }
    const std::uint64_t begin = pos + header_size;
    KH_RETURN_IF_ERROR(read_entries(section, begin, begin + entries_size, entries));
    pos = begin + entries_size;
  }
  return entries;
}

Result<std::vector<FatbinEntry>> Fatbin::from_elf(std::string_view file) {
  KH_ASSIGN_OR_RETURN(const ElfFile elf, ElfFile::parse(file));
  return from_elf(elf, file);
}

Result<std::vector<FatbinEntry>> Fatbin::from_elf(const ElfFile& elf, std::string_view file) {
  std::vector<FatbinEntry> entries;
  // `__nv_relfatbin` holds the fatbins of relocatable device code (-rdc) before device linking.
  for (std::string_view name : {".nv_fatbin", "__nv_relfatbin"}) {
    if (!elf.has_section(name)) continue;
    const auto bytes = ElfFile::section_bytes(file, name);
    if (!bytes) {
      return unexpected(ErrorCode::kCorruptFile,
                        "not a valid ELF shared library: section `" + std::string(name) + "` cannot be read");
    }
    auto parsed = parse(*bytes);
    if (!parsed) return unexpected(parsed.error().with_context("section `" + std::string(name) + "`"));
    entries.insert(entries.end(), parsed->begin(), parsed->end());
  }
  return entries;
}

Result<std::vector<FatbinEntry>> Fatbin::read(const std::filesystem::path& path) {
  KH_ASSIGN_OR_RETURN(MappedFile file, MappedFile::open(path));
  auto entries = from_elf(file.bytes());
  if (!entries) return unexpected(entries.error().with_context("`" + path.string() + "`"));
  return entries;
}

std::vector<resolver::CudaTarget> targets_of(const std::vector<FatbinEntry>& entries) {
  std::vector<resolver::CudaTarget> out;
  out.reserve(entries.size());
  for (const auto& e : entries) out.push_back(e.target);
  return out;
}

}  // namespace kernelhub::binary_format
