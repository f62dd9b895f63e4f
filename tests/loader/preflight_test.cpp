#include "kernelhub/loader/internal/preflight.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>
#include "kernelhub/binary_format/internal/elf_file.hpp"
#include "support/file_bytes.hpp"

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
  const auto elf = binary_format::ElfFile::parse(bytes).value();
  const auto imported = std::find_if(elf.symbols.begin(), elf.symbols.end(), [](const binary_format::ElfSymbol& s) {
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

namespace kernelhub::loader {
namespace {

bool loaded_in_process(const std::string& name) {
  void* handle = dlopen(name.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (handle != nullptr) dlclose(handle);
  return handle != nullptr;
}

TEST_CASE("torch's own libraries a kernel-builder library needs are found in torch's directories") {
  const auto& torch = binary_format::TorchLibraries::of_this_process();
  REQUIRE_FALSE(torch.lib_dir.empty());
  CHECK(torch.find("libtorch.so") == torch.lib_dir / "libtorch.so");
  CHECK(torch.find("libc10_cuda.so") == torch.lib_dir / "libc10_cuda.so");
  // The CUDA runtime from the nvidia-* wheels, through torch's own RPATH.
  const auto cudart = torch.find("libcudart.so.13");
  REQUIRE(cudart.has_value());
  CHECK(cudart->parent_path() != torch.lib_dir);
  CHECK_FALSE(torch.find("libnot_a_torch_library.so").has_value());
  CHECK_FALSE(torch.find("../lib/libtorch.so").has_value());
  CHECK(binary_format::is_torch_library_name("libtorch_cuda.so"));
  CHECK(binary_format::is_torch_library_name("libc10_hip.so"));
  CHECK_FALSE(binary_format::is_torch_library_name("libcudart.so.13"));
}

TEST_CASE("a library linked against the torch target passes: its torch libraries are loaded, not the library") {
  const bool cuda_loaded_before = loaded_in_process("libtorch_cuda.so");
  const auto report = check_loadable(KERNELHUB_KB_CLASSIC_LIBRARY, map_environment({})).value();
  CHECK(report.bind_now);
  if (!cuda_loaded_before) {
    auto named = [&](const std::string& soname) {
      return std::any_of(report.torch_libraries.begin(), report.torch_libraries.end(),
                         [&](const std::filesystem::path& p) { return p.filename() == soname; });
    };
    CHECK(named("libtorch.so"));
    CHECK(named("libtorch_cuda.so"));
    CHECK(named("libc10_cuda.so"));
  }
  CHECK(loaded_in_process("libtorch_cuda.so"));
  CHECK_FALSE(loaded_in_process(KERNELHUB_KB_CLASSIC_LIBRARY));
}

TEST_CASE("a library that needs a torch library this torch does not have is refused before anything loads") {
  const bool loaded_before = loaded_in_process("libtorch.so");
  std::string bytes = read_bytes(KERNELHUB_KB_CLASSIC_LIBRARY);
  const auto pos = bytes.find(std::string("libtorch_cuda.so") + '\0');
  REQUIRE(pos != std::string::npos);
  bytes.replace(pos, 16, "libtorch_rocm.so");  // as if built against a ROCm torch
  const auto path = write_temp("rocm_torch.so", bytes);
  const auto r = check_loadable(path, map_environment({}));
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == ErrorCode::kIncompatibleBinary);
  CHECK_THAT(r.error().message, Catch::Contains("needs `libtorch_rocm.so`, a torch library that the LibTorch in "
                                                "this process") &&
                                    Catch::Contains("built against another build of torch"));
  CHECK(loaded_in_process("libtorch.so") == loaded_before);
  CHECK_FALSE(loaded_in_process(path));
}

TEST_CASE("a stable-ABI library that needs a newer torch's C ABI is refused, naming the function") {
  std::string bytes = read_bytes(KERNELHUB_KB_STABLE_LIBRARY);
  const auto elf = binary_format::ElfFile::parse(bytes).value();
  // It imports C functions of the stable ABI, and no C++ torch symbol at all.
  const auto shim = std::find_if(elf.symbols.begin(), elf.symbols.end(), [](const binary_format::ElfSymbol& s) {
    return !s.defined && (s.name.starts_with("aoti_torch_") || s.name.starts_with("torch_"));
  });
  REQUIRE(shim != elf.symbols.end());
  CHECK(std::none_of(elf.symbols.begin(), elf.symbols.end(), [](const binary_format::ElfSymbol& s) {
    return !s.defined && (s.name.starts_with("_ZN3c10") || s.name.starts_with("_ZN2at"));
  }));
  const auto pos = bytes.find('\0' + shim->name + '\0');
  REQUIRE(pos != std::string::npos);
  char& last = bytes[pos + shim->name.size()];
  last = last == 'Q' ? 'R' : 'Q';  // a function this torch does not have, as one a newer torch added
  const auto path = write_temp("newer_stable.so", bytes);
  const auto r = check_loadable(path, map_environment({}));
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == ErrorCode::kIncompatibleBinary);
  CHECK_THAT(r.error().message,
             Catch::Contains("function(s) of torch's stable C ABI") && Catch::Contains("built for a newer torch"));
  CHECK_FALSE(loaded_in_process(path));
}

}  // namespace
}  // namespace kernelhub::loader
