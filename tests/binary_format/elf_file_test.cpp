#include "kernelhub/binary_format/internal/elf_file.hpp"

#include <elf.h>

#include <catch2/catch.hpp>

#include <cstring>
#include <fstream>
#include <sstream>
#include "support/file_bytes.hpp"

namespace kernelhub::binary_format {
namespace {

using testing::read_bytes;

bool has_undefined(const ElfFile& elf, const std::string& name) {
  for (const auto& s : elf.symbols) {
    if (s.name == name && !s.defined) return true;
  }
  return false;
}

TEST_CASE("reads what a kernel-builder-shaped library needs: libraries, symbols, versions, binding") {
  const auto elf = ElfFile::read(KERNELHUB_BINDNOW_FIXTURE).value();
  CHECK(elf.is_64bit);
  CHECK(elf.type == ET_DYN);
  CHECK(machine_name(elf.machine) == "x86_64");
  CHECK(elf.bind_now);
  CHECK(std::find(elf.needed.begin(), elf.needed.end(), "libc10.so") != elf.needed.end());
  CHECK(std::find(elf.needed.begin(), elf.needed.end(), "libtorch_cpu.so") != elf.needed.end());
  CHECK(has_undefined(elf, "PyModule_Create2"));
  bool glibc_versioned = false;
  for (const auto& s : elf.symbols) {
    if (!s.defined && s.version.starts_with("GLIBC_")) {
      glibc_versioned = true;
      CHECK((s.library == "libc.so.6" || s.library == "libm.so.6"));
    }
  }
  CHECK(glibc_versioned);
  bool pyinit = false;
  for (const auto& s : elf.symbols) pyinit |= s.defined && s.name == "PyInit__kh_bindnow_cpu_fixture";
  CHECK(pyinit);
}

TEST_CASE("libstdc++'s version definitions are read") {
  const auto elf = ElfFile::read("/usr/lib/x86_64-linux-gnu/libstdc++.so.6").value();
  CHECK(std::find(elf.defined_versions.begin(), elf.defined_versions.end(), "GLIBCXX_3.4.21") !=
        elf.defined_versions.end());
}

TEST_CASE("not-ELF, truncated and lying files are kCorruptFile, never a crash") {
  CHECK(ElfFile::parse("hello world").error().code == ErrorCode::kCorruptFile);
  CHECK(ElfFile::parse("").error().code == ErrorCode::kCorruptFile);
  const std::string good = read_bytes(KERNELHUB_BINDNOW_FIXTURE);
  // Every truncation point in the header region, and a sample beyond it.
  for (std::size_t n : {4ul, 16ul, 20ul, 63ul, 64ul, 200ul, good.size() / 2, good.size() - 1}) {
    INFO(n);
    const auto r = ElfFile::parse(std::string_view(good).substr(0, n));
    if (!r) CHECK(r.error().code == ErrorCode::kCorruptFile);
  }
  // Section headers pointing far outside the file.
  std::string lying = good;
  const std::uint64_t far = 1ull << 40;
  std::memcpy(lying.data() + offsetof(Elf64_Ehdr, e_shoff), &far, sizeof(far));
  const auto r = ElfFile::parse(lying);
  REQUIRE_FALSE(r.has_value());
  CHECK_THAT(r.error().message, Catch::Contains("outside the file"));
  CHECK(ElfFile::read("/nonexistent.so").error().code == ErrorCode::kNotFound);
}

}  // namespace
}  // namespace kernelhub::binary_format
