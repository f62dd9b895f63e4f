#include "kernelhub/tvm_ffi_loader/internal/preflight.hpp"

#include <dlfcn.h>

#include <catch2/catch.hpp>

#include "kernelhub/binary_format/internal/file_checks.hpp"

namespace kernelhub::tvm_ffi_loader {
namespace {

const EnvironmentSource kEnv = map_environment(
    {{"LD_LIBRARY_PATH", std::filesystem::path(KERNELHUB_TVM_FFI_LIBRARY_PATH).parent_path().string()}});

bool loaded(const std::filesystem::path& path) {
  void* handle = dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (handle != nullptr) dlclose(handle);
  return handle != nullptr;
}

TEST_CASE("the functions of a tvm-ffi library are its __tvm_ffi_ symbols, without the metadata ones") {
  const auto elf = binary_format::ElfFile::read(KERNELHUB_TVM_FFI_FIXTURE);
  REQUIRE(elf);
  CHECK(exported_functions(*elf) == std::vector<std::string>{"add_one", "fill_cpu", "greeting", "iota",
                                                             "raise_value_error", "stream_of", "times_two"});
  CHECK(preflight(KERNELHUB_TVM_FFI_FIXTURE, *elf, kEnv));
}

TEST_CASE("a library that exports TVM-FFI functions but needs LibTorch is not a tvm-ffi kernel") {
  const auto elf = binary_format::ElfFile::read(KERNELHUB_TVM_FFI_NEEDS_TORCH);
  REQUIRE(elf);
  const Status refused = preflight(KERNELHUB_TVM_FFI_NEEDS_TORCH, *elf, kEnv);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == ErrorCode::kIncompatibleBinary);
  CHECK_THAT(refused.error().message, Catch::Contains("it needs LibTorch (libraries `libc10.so`)"));
  CHECK_THAT(refused.error().message, Catch::Contains("not a tvm-ffi kernel"));
  CHECK_THAT(refused.error().message, Catch::Contains("kernelhub::get_kernel"));
  CHECK_FALSE(loaded(KERNELHUB_TVM_FFI_NEEDS_TORCH));
}

TEST_CASE("a library with no TVM-FFI function is not a tvm-ffi kernel") {
  const auto libm = binary_format::find_on_library_path("libm.so.6", kEnv);
  REQUIRE(libm);
  const auto elf = binary_format::ElfFile::read(*libm);
  REQUIRE(elf);
  const Status refused = preflight(*libm, *elf, kEnv);
  REQUIRE_FALSE(refused);
  CHECK_THAT(refused.error().message, Catch::Contains("exports no TVM-FFI function"));
}

TEST_CASE("the file checks of every kernel apply: a library for another cpu is refused") {
  auto elf = binary_format::ElfFile::read(KERNELHUB_TVM_FFI_FIXTURE);
  REQUIRE(elf);
  elf->machine = 183;  // as if built for aarch64
  const Status refused = preflight(KERNELHUB_TVM_FFI_FIXTURE, *elf, kEnv);
  REQUIRE_FALSE(refused);
  CHECK_THAT(refused.error().message, Catch::Contains("it is built for aarch64"));
  CHECK_THAT(refused.error().message, Catch::Contains("use the variant built for this cpu"));
}

TEST_CASE("a NEEDED library found nowhere is named") {
  auto elf = binary_format::ElfFile::read(KERNELHUB_TVM_FFI_FIXTURE);
  REQUIRE(elf);
  elf->needed.push_back("libkernelhub_missing_dependency.so.3");
  const Status refused = preflight(KERNELHUB_TVM_FFI_FIXTURE, *elf, kEnv);
  REQUIRE_FALSE(refused);
  CHECK_THAT(refused.error().message, Catch::Contains("libkernelhub_missing_dependency.so.3"));
}

}  // namespace
}  // namespace kernelhub::tvm_ffi_loader
