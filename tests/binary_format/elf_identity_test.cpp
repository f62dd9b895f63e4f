// The machine checks, on a library this build's compiler made (fixtures/machine_fixture.c): x86_64 in
// the x86_64 build, aarch64 in the aarch64 one (scripts/aarch64.sh, under qemu). What the pre-flight
// reads of it (machine, NEEDED, symbol versions, relocation kinds), a copy claiming the other
// machine, and copies cut short. Links no LibTorch.
#include "kernelhub/binary_format/internal/elf_identity.hpp"

#include <elf.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>

#include "kernelhub/binary_format/internal/elf_file.hpp"
#include "kernelhub/binary_format/internal/file_checks.hpp"
#include "support/file_bytes.hpp"

namespace kernelhub::binary_format {
namespace {

using testing::read_bytes;
using testing::write_temp;

std::uint16_t other_machine() {
  return host_machine() == EM_AARCH64 ? EM_X86_64 : EM_AARCH64;
}

std::string with_machine(std::string bytes, std::uint16_t machine) {
  std::memcpy(bytes.data() + offsetof(Elf64_Ehdr, e_machine), &machine, sizeof machine);
  return bytes;
}

TEST_CASE("a library built here reads as this machine's: header, NEEDED, symbol versions, relocations") {
  REQUIRE(host_machine() != EM_NONE);
  const auto id = ElfIdentity::read(KERNELHUB_MACHINE_FIXTURE).value();
  CHECK(id.is_64bit);
  CHECK(id.little_endian);
  CHECK(id.machine == host_machine());
  CHECK(id.type == ET_DYN);

  const auto elf = ElfFile::read(KERNELHUB_MACHINE_FIXTURE).value();
  CHECK(elf.machine == host_machine());
  CHECK(std::find(elf.needed.begin(), elf.needed.end(), "libc.so.6") != elf.needed.end());
  bool glibc_versioned = false;
  for (const auto& s : elf.symbols) glibc_versioned |= !s.defined && s.version.starts_with("GLIBC_");
  CHECK(glibc_versioned);
  // Every kind of dynamic relocation it has is one this machine's dynamic linker applies; a
  // shared library always has some (its GOT, its init array).
  REQUIRE_FALSE(elf.relocation_types.empty());
  for (std::uint32_t type : elf.relocation_types) {
    INFO(type);
    CHECK_FALSE(dynamic_relocation_name(host_machine(), type).empty());
  }
  const std::string prefix = host_machine() == EM_AARCH64 ? "R_AARCH64_" : "R_X86_64_";
  CHECK(dynamic_relocation_name(host_machine(), elf.relocation_types.back()).starts_with(prefix));

  const PreflightReport report = check_file(KERNELHUB_MACHINE_FIXTURE, elf, map_environment({}), TorchLibraries{});
  CHECK(report.problems.empty());
}

TEST_CASE("the variant's name and its library's machine must agree, named for both") {
  const std::string here(machine_name(host_machine()));
  const std::string other(machine_name(other_machine()));
  const auto id = ElfIdentity::read(KERNELHUB_MACHINE_FIXTURE).value();
  CHECK(check_variant_machine(KERNELHUB_MACHINE_FIXTURE, id, "tvm-ffi01-cpu-" + here + "-linux", here).has_value());
  // An unknown cpu has no machine to check against.
  CHECK(machine_of_cpu("riscv64") == EM_NONE);
  CHECK(check_variant_machine(KERNELHUB_MACHINE_FIXTURE, id, "tvm-ffi01-cpu-riscv64-linux", "riscv64").has_value());

  // This machine's library in a folder named for the other machine.
  const std::string folder = "torch215-cxx11-cpu-" + other + "-linux";
  const auto refused = check_variant_machine(KERNELHUB_MACHINE_FIXTURE, id, folder, other);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == ErrorCode::kIncompatibleBinary);
  CHECK_THAT(refused.error().message,
             Catch::Contains("is built for " + here + ", but its variant `" + folder + "` is named for " + other));
  CHECK_THAT(refused.error().message, Catch::Contains("this machine is " + here));

  // The other machine's library (the same bytes, e_machine changed) in a folder named for this one.
  const auto lying =
      write_temp("other_machine.so", with_machine(read_bytes(KERNELHUB_MACHINE_FIXTURE), other_machine()));
  const auto lying_id = ElfIdentity::read(lying).value();
  CHECK(lying_id.machine == other_machine());
  const auto mislabelled = check_variant_machine(lying, lying_id, "torch215-cxx11-cpu-" + here + "-linux", here);
  REQUIRE_FALSE(mislabelled);
  CHECK_THAT(mislabelled.error().message, Catch::Contains("is built for " + other + ", but its variant"));
  // The pre-flight, which a load runs whatever the folder says, refuses it too.
  const auto elf = ElfFile::read(lying).value();
  const PreflightReport report = check_file(lying, elf, map_environment({}), TorchLibraries{});
  REQUIRE(report.problems.size() == 1);
  CHECK_THAT(report.problems[0], Catch::Contains("it is built for " + other + ", this process is " + here));
}

TEST_CASE("a library cut short is kCorruptFile from its header alone, never a crash") {
  const std::string good = read_bytes(KERNELHUB_MACHINE_FIXTURE);
  for (std::size_t n : {0ul, 4ul, 17ul, 40ul, 63ul, 64ul, 1000ul, good.size() / 2, good.size() - 1}) {
    INFO(n);
    const auto path = write_temp("cut_short.so", good.substr(0, n));
    const auto id = ElfIdentity::read(path);
    REQUIRE_FALSE(id);
    CHECK(id.error().code == ErrorCode::kCorruptFile);
    CHECK_THAT(id.error().message, Catch::Contains("cut_short.so"));
    if (n >= sizeof(Elf64_Ehdr)) CHECK_THAT(id.error().message, Catch::Contains("cut short"));
  }
  CHECK(ElfIdentity::read(write_temp("whole.so", good)).has_value());
  CHECK(ElfIdentity::read("/nonexistent/lib.so").error().code == ErrorCode::kNotFound);
  // A header whose tables would end past any file.
  std::string lying = good;
  const std::uint64_t far = ~std::uint64_t{0} - 10;
  std::memcpy(lying.data() + offsetof(Elf64_Ehdr, e_shoff), &far, sizeof far);
  CHECK(ElfIdentity::parse(lying, lying.size()).error().code == ErrorCode::kCorruptFile);
}

TEST_CASE("a relocation kind this machine's dynamic linker does not apply is a pre-flight problem") {
  auto elf = ElfFile::read(KERNELHUB_MACHINE_FIXTURE).value();
  elf.relocation_types.push_back(4000);
  const PreflightReport report = check_file(KERNELHUB_MACHINE_FIXTURE, elf, map_environment({}), TorchLibraries{});
  REQUIRE(report.problems.size() == 1);
  CHECK_THAT(report.problems[0],
             Catch::Contains("dynamic relocations of type 4000, which the " +
                             std::string(machine_name(host_machine())) + " dynamic linker does not apply"));
  CHECK(dynamic_relocation_name(EM_AARCH64, R_AARCH64_GLOB_DAT) == "R_AARCH64_GLOB_DAT");
  CHECK(dynamic_relocation_name(EM_X86_64, R_X86_64_JUMP_SLOT) == "R_X86_64_JUMP_SLOT");
  CHECK(dynamic_relocation_name(EM_AARCH64, R_X86_64_JUMP_SLOT).empty());  // 7 is no aarch64 dynamic relocation
}

}  // namespace
}  // namespace kernelhub::binary_format
