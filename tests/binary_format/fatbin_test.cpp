#include "kernelhub/binary_format/internal/fatbin.hpp"

#include <catch2/catch.hpp>

#include "fatbin_bytes.hpp"
#include "support/file_bytes.hpp"

namespace kernelhub::binary_format {
namespace {

using testing::fatbin;
using testing::FatbinEntrySpec;

FatbinEntrySpec sass(std::uint32_t arch, std::uint64_t flags = 0x11) {
  FatbinEntrySpec e;
  e.arch = arch;
  e.flags = flags;
  return e;
}

FatbinEntrySpec ptx(std::uint32_t arch, std::uint16_t major, std::uint16_t minor) {
  FatbinEntrySpec e;
  e.kind = 1;
  e.arch = arch;
  e.major = major;
  e.minor = minor;
  e.header_size = 80;  // nvcc 13 writes PTX entries with an 80-byte header
  e.payload = ".version 9.0\n.target sm_90\n";
  return e;
}

std::vector<std::string> names(const std::vector<FatbinEntry>& entries) {
  std::vector<std::string> out;
  for (const auto& e : entries) out.push_back(e.target.to_string());
  return out;
}

void require_corrupt(std::string_view bytes, std::string_view why) {
  const auto r = Fatbin::parse(bytes);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == ErrorCode::kCorruptFile);
  CHECK_THAT(r.error().message, Catch::Contains(std::string(why)));
}

TEST_CASE("fatbin entries give kind, arch, suffix, compression, size and PTX ISA") {
  FatbinEntrySpec zstd = ptx(90, 9, 0);
  zstd.flags = 0x8011;
  zstd.payload = std::string(40, 'z');
  zstd.compressed_size = 37;
  zstd.uncompressed_size = 724;
  FatbinEntrySpec family = sass(100, 0x1200011);
  family.header_size = 96;
  const std::string bytes = fatbin({sass(80), sass(90, 0x100011), zstd, family, sass(120, 0x1100011)});

  const auto entries = Fatbin::parse(bytes);
  REQUIRE(entries.has_value());
  CHECK(names(*entries) == std::vector<std::string>{"sm_80", "sm_90a", "compute_90", "sm_100f", "sm_120a"});
  const auto& p = entries->at(2);
  CHECK(p.target.kind == resolver::CudaCodeKind::kPtx);
  CHECK(p.target.ptx_isa == std::optional<resolver::Version>(resolver::Version{9, 0}));
  CHECK(p.compressed);
  CHECK(p.size == 37);
  CHECK(p.uncompressed_size == 724);
  CHECK(p.flags == 0x8011);
  const auto& s = entries->at(0);
  CHECK(s.target.kind == resolver::CudaCodeKind::kSass);
  CHECK(s.target.sm() == 80);
  CHECK_FALSE(s.target.ptx_isa.has_value());
  CHECK_FALSE(s.compressed);
  CHECK(s.size == 24);
  CHECK(s.uncompressed_size == 24);
  CHECK(targets_of(*entries).size() == 5);
}

TEST_CASE("LZ4 compressed entries (-compress-mode=speed) are recognised") {
  FatbinEntrySpec lz4 = ptx(90, 9, 0);
  lz4.flags = 0x2011;
  lz4.compressed_size = 20;
  lz4.uncompressed_size = 100;
  const auto entries = Fatbin::parse(fatbin({lz4}));
  REQUIRE(entries.has_value());
  CHECK(entries->at(0).compressed);
}

TEST_CASE("a section holds several fatbins, with zero padding between them") {
  const std::string bytes =
      fatbin({sass(80)}) + std::string(8, '\0') + fatbin({}) + fatbin({ptx(90, 9, 0)}) + std::string(3, '\0');
  const auto entries = Fatbin::parse(bytes);
  REQUIRE(entries.has_value());
  CHECK(names(*entries) == std::vector<std::string>{"sm_80", "compute_90"});
  CHECK(Fatbin::parse("").value().empty());
  CHECK(Fatbin::parse(std::string(64, '\0')).value().empty());
}

TEST_CASE("longer fatbin and entry headers are skipped by their declared size") {
  FatbinEntrySpec big = sass(103, 0x1200011);
  big.header_size = 112;
  const auto entries = Fatbin::parse(fatbin({big, sass(75)}, 0, 0xBA55ED50, 1, 24));
  REQUIRE(entries.has_value());
  CHECK(names(*entries) == std::vector<std::string>{"sm_103f", "sm_75"});
}

TEST_CASE("every truncation of a fatbin is an error or a prefix of its entries, never a crash") {
  const std::string one = fatbin({sass(80), ptx(90, 9, 0)});
  const std::string bytes = one + fatbin({sass(90)});
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    INFO(n);
    const auto r = Fatbin::parse(std::string_view(bytes).substr(0, n));
    if (n == 0 || n == one.size()) {
      REQUIRE(r.has_value());
      CHECK(r->size() == (n == 0 ? 0u : 2u));
    } else {
      REQUIRE_FALSE(r.has_value());
      CHECK(r.error().code == ErrorCode::kCorruptFile);
    }
  }
}

TEST_CASE("lying fatbin headers are kCorruptFile") {
  require_corrupt(fatbin({sass(80)}, 0, 0xDEADBEEF), "expected the fatbin magic 0xba55ed50, found 0xdeadbeef");
  require_corrupt(fatbin({sass(80)}, 0, 0xBA55ED50, 2), "unsupported fatbin version 2");
  require_corrupt(fatbin({sass(80)}, 0, 0xBA55ED50, 1, 8), "the fatbin header claims 8 bytes");
  require_corrupt(fatbin({sass(80)}, 0, 0xBA55ED50, 1, 0xffff), "the fatbin header claims 65535 bytes");
  require_corrupt(fatbin({sass(80)}, 1'000'000), "claims 1000000 bytes of entries");
  require_corrupt(fatbin({sass(80)}, UINT64_MAX), "bytes of entries");
  require_corrupt(fatbin({sass(80)}, 40), "an entry header is truncated (40 bytes left)");
  require_corrupt("\x50\xed\x55\xba", "the fatbin header is truncated");
}

TEST_CASE("lying entry headers are kCorruptFile, and none can stall the reader") {
  FatbinEntrySpec zero_header = sass(80);
  zero_header.header_size = 0;  // would never advance
  require_corrupt(fatbin({zero_header}), "an entry header claims 0 bytes");
  FatbinEntrySpec short_header = sass(80);
  short_header.header_size = 63;
  require_corrupt(fatbin({short_header}), "at least 64 are needed");
  FatbinEntrySpec long_header = sass(80);
  long_header.header_size = 0xffffffff;
  require_corrupt(fatbin({long_header}, 88), "an entry header claims 4294967295 bytes");
  FatbinEntrySpec huge_payload = sass(80);
  huge_payload.payload_size_override = UINT64_MAX;
  require_corrupt(fatbin({huge_payload}), "payload bytes; only 24 are left");
  FatbinEntrySpec past_fatbin = sass(80);
  past_fatbin.payload_size_override = 25;
  require_corrupt(fatbin({past_fatbin}), "an entry claims 25 payload bytes");

  FatbinEntrySpec kind = sass(80);
  kind.kind = 3;
  require_corrupt(fatbin({kind}), "unknown entry kind 3");
  require_corrupt(fatbin({sass(0)}), "entry arch 0 is not an SM number");
  require_corrupt(fatbin({sass(9)}), "entry arch 9 is not an SM number");
  require_corrupt(fatbin({sass(4096)}), "entry arch 4096 is not an SM number");
  require_corrupt(fatbin({sass(90, 0x300011)}), "both arch-specific (a) and family (f)");

  FatbinEntrySpec over = sass(90, 0x8011);
  over.compressed_size = 25;
  over.uncompressed_size = 100;
  require_corrupt(fatbin({over}), "a compressed entry claims 25 compressed bytes in a 24-byte payload");
  FatbinEntrySpec no_size = sass(90, 0x8011);
  no_size.compressed_size = 10;
  require_corrupt(fatbin({no_size}), "0 uncompressed");
}

TEST_CASE("the legacy cubin kind counts as SASS") {
  FatbinEntrySpec legacy = sass(70);
  legacy.kind = 4;
  const auto entries = Fatbin::parse(fatbin({legacy}));
  REQUIRE(entries.has_value());
  CHECK(entries->at(0).target.to_string() == "sm_70");
}

TEST_CASE("from_elf: a library without device code has no entries; non-ELF bytes are corrupt") {
  const auto cpu = Fatbin::read(KERNELHUB_FATBIN_CPU_FIXTURE);
  REQUIRE(cpu.has_value());
  CHECK(cpu->empty());

  const auto not_elf = Fatbin::from_elf(fatbin({sass(80)}));
  REQUIRE_FALSE(not_elf.has_value());
  CHECK(not_elf.error().code == ErrorCode::kCorruptFile);

  const auto missing = Fatbin::read("/nonexistent/kh_fatbin.so");
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().code == ErrorCode::kNotFound);
}

}  // namespace
}  // namespace kernelhub::binary_format
