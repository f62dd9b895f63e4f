#include "kernelhub/loader/preflight.hpp"

#include <elf.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>
#include "file_bytes.hpp"
#include "kernelhub/loader/elf_file.hpp"

namespace kernelhub::loader {
namespace {

using testing::read_bytes;
using testing::write_temp;

TEST_CASE("a kernel built for this machine and torch passes, and asks for the Python stub") {
  const auto report = check_loadable(KERNELHUB_BINDNOW_FIXTURE, map_environment({})).value();
  CHECK(report.problems.empty());
  CHECK(report.bind_now);
  CHECK(report.needs_python_stub);
  CHECK(std::find(report.python_symbols.begin(), report.python_symbols.end(), "PyModule_Create2") !=
        report.python_symbols.end());
}

TEST_CASE("a kernel for another cpu is refused before dlopen, naming both machines") {
  std::string bytes = read_bytes(KERNELHUB_BINDNOW_FIXTURE);
  const std::uint16_t aarch64 = EM_AARCH64;
  std::memcpy(bytes.data() + offsetof(Elf64_Ehdr, e_machine), &aarch64, sizeof(aarch64));
  const auto r = check_loadable(write_temp("arm.so", bytes), map_environment({}));
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == ErrorCode::kIncompatibleBinary);
  CHECK_THAT(r.error().message, Catch::Contains("built for aarch64, this process is x86_64"));
}

TEST_CASE("a missing library, a newer glibc and a foreign torch symbol are each named") {
  std::string bytes = read_bytes(KERNELHUB_BINDNOW_FIXTURE);
  auto patch = [&](const std::string& from, const std::string& to) {
    REQUIRE(from.size() == to.size());
    const auto pos = bytes.find(from + '\0');
    REQUIRE(pos != std::string::npos);
    bytes.replace(pos, from.size(), to);
  };
  patch("libtorch_cpu.so", "libtorch_xyz.so");  // a NEEDED entry that exists nowhere
  patch("GLIBC_2.14", "GLIBC_9.99");            // memcpy@GLIBC_2.14 is needed by every C++ library
  const auto r = check_loadable(write_temp("bad.so", bytes), map_environment({}));
  REQUIRE_FALSE(r.has_value());
  CHECK_THAT(r.error().message, Catch::Contains("needs `libtorch_xyz.so`"));
  CHECK_THAT(r.error().message, Catch::Contains("needs GLIBC_9.99 but this system has GLIBC_2."));
}

TEST_CASE("a torch symbol this LibTorch does not export is named as a torch version or ABI mismatch") {
  std::string bytes = read_bytes(KERNELHUB_BINDNOW_FIXTURE);
  // Rename one imported c10 symbol in the dynamic string table, keeping its length: as if the
  // library had been built against a torch whose c10 has a function this one lacks.
  const auto elf = ElfFile::parse(bytes).value();
  const auto imported = std::find_if(elf.symbols.begin(), elf.symbols.end(), [](const ElfSymbol& s) {
    return !s.defined && (s.name.rfind("_ZN3c10", 0) == 0 || s.name.rfind("_ZN2at", 0) == 0);
  });
  REQUIRE(imported != elf.symbols.end());
  const auto pos = bytes.find('\0' + imported->name + '\0');
  REQUIRE(pos != std::string::npos);
  char& last = bytes[pos + imported->name.size()];  // the last character of the name
  last = last == 'Q' ? 'R' : 'Q';
  const auto r = check_loadable(write_temp("foreign_torch.so", bytes), map_environment({}));
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == ErrorCode::kIncompatibleBinary);
  CHECK_THAT(r.error().message, Catch::Contains("torch symbol(s) that the LibTorch in this process does not export") &&
                                    Catch::Contains("built for another torch version or C++ ABI"));
}

}  // namespace
}  // namespace kernelhub::loader
