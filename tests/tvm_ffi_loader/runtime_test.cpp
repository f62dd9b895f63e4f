#include "kernelhub/tvm_ffi_loader/internal/runtime.hpp"

#include <dlfcn.h>

#include <catch2/catch.hpp>

#include "kernelhub/binary_format/internal/file_checks.hpp"

namespace kernelhub::tvm_ffi_loader {
namespace {

// An environment with no Python, no library path and no KERNELHUB_TVM_FFI_LIBRARY, plus `extra`.
EnvironmentSource bare(std::map<std::string, std::string, std::less<>> extra = {}) {
  extra.emplace("PATH", "/nonexistent");
  extra.emplace("HOME", "/nonexistent");
  return map_environment(extra);
}

bool runtime_loaded() {
  void* handle = dlopen("libtvm_ffi.so", RTLD_LAZY | RTLD_NOLOAD);
  if (handle != nullptr) dlclose(handle);
  return handle != nullptr;
}

// First: while this process has no runtime loaded (ctest runs each case in its own process).
TEST_CASE("with no runtime anywhere, locate_runtime says where it looked and how to install one") {
  REQUIRE_FALSE(runtime_loaded());
  const auto found = locate_runtime(bare());
  REQUIRE_FALSE(found);
  CHECK(found.error().code == ErrorCode::kNotFound);
  const std::string& message = found.error().message;
  CHECK_THAT(message, Catch::Contains("none is loaded in this process"));
  CHECK_THAT(message, Catch::Contains("KERNELHUB_TVM_FFI_LIBRARY is not set"));
  CHECK_THAT(message, Catch::Contains("no Python environment"));
  CHECK_THAT(message, Catch::Contains("pip install apache-tvm-ffi"));
}

TEST_CASE("KERNELHUB_TVM_FFI_LIBRARY that names no file is an error, not a fallback") {
  const auto found = locate_runtime(bare({{"KERNELHUB_TVM_FFI_LIBRARY", "/nonexistent/libtvm_ffi.so"}}));
  REQUIRE_FALSE(found);
  CHECK(found.error().code == ErrorCode::kNotFound);
  const std::string& message = found.error().message;
  CHECK_THAT(message, Catch::Contains("/nonexistent/libtvm_ffi.so` does not exist"));
  // What else it could do: where the runtime is looked for without it, and how to get one.
  CHECK_THAT(message, Catch::Contains("unset it to use the runtime this program was built with"));
  CHECK_THAT(message, Catch::Contains("pip install apache-tvm-ffi"));
  CHECK_THAT(message, Catch::Contains("tvm_ffi.libinfo.find_libtvm_ffi()"));
}

TEST_CASE("the runtime a program was built with is found in its RUNPATH, before any Python environment's") {
  REQUIRE_FALSE(runtime_loaded());
  const std::filesystem::path built_with = std::filesystem::path(KERNELHUB_TVM_FFI_RUNTIME_0_2).parent_path();
  const ProgramLibraryDirs program{"/opt/app/bin/app", {"/nonexistent/lib", built_with}};
  const auto found = locate_runtime(bare({{"VIRTUAL_ENV", KERNELHUB_VENV}}), program);
  REQUIRE(found);
  CHECK(found->path == built_with / "libtvm_ffi.so");
  CHECK(found->found_by == "the runtime `/opt/app/bin/app` was built with, from its RUNPATH");
  // Built to look elsewhere: the search goes on, and says where the program looked.
  const auto elsewhere = locate_runtime(bare(), ProgramLibraryDirs{"/opt/app/bin/app", {"/nonexistent/lib"}});
  REQUIRE_FALSE(elsewhere);
  CHECK_THAT(elsewhere.error().message,
             Catch::Contains("none is where this program (`/opt/app/bin/app`) was built to look (`/nonexistent/lib`)"));
  const auto nowhere = locate_runtime(bare(), ProgramLibraryDirs{"/opt/app/bin/app", {}});
  REQUIRE_FALSE(nowhere);
  CHECK_THAT(nowhere.error().message, Catch::Contains("was built to look nowhere else (no RUNPATH)"));
}

TEST_CASE("the program's own library directories are those of the executable this code is linked into") {
  const ProgramLibraryDirs program = program_library_dirs();
  CHECK(program.object == std::filesystem::read_symlink("/proc/self/exe"));
}

TEST_CASE("the apache-tvm-ffi package of the Python environment is found from files, and opened LOCAL") {
  REQUIRE_FALSE(runtime_loaded());
  const EnvironmentSource env = bare({{"VIRTUAL_ENV", KERNELHUB_VENV}});
  const auto found = locate_runtime(env);
  REQUIRE(found);
  CHECK(found->path.filename() == "libtvm_ffi.so");
  CHECK(found->path.parent_path().parent_path().filename() == "tvm_ffi");
  CHECK_THAT(found->found_by, Catch::Contains("apache-tvm-ffi package"));
  const auto runtime = Runtime::open(*found, env);
  REQUIRE(runtime);
  CHECK((*runtime)->version().major_minor() == resolver::Version{0, 1});
  // Opened to read its version only: its symbols stay out of the global scope until a kernel needs them.
  CHECK(dlsym(RTLD_DEFAULT, "TVMFFIGetVersion") == nullptr);
  REQUIRE((*runtime)->make_global());
  CHECK(dlsym(RTLD_DEFAULT, "TVMFFIGetVersion") != nullptr);
  // From now on the process has a runtime, and it is the one every later search finds.
  const auto again = locate_runtime(bare());
  REQUIRE(again);
  CHECK(again->found_by == "already loaded in this process");
}

TEST_CASE("a runtime of another major.minor is refused for a variant, saying what to install") {
  const RuntimeLocation location{KERNELHUB_TVM_FFI_RUNTIME_0_2, "KERNELHUB_TVM_FFI_LIBRARY"};
  const auto runtime = Runtime::open(location, bare());
  REQUIRE(runtime);
  CHECK((*runtime)->version().to_string() == "0.2.0");
  const Status refused = (*runtime)->require(resolver::Version{0, 1}, "tvm-ffi01-cpu-x86_64-linux");
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == ErrorCode::kIncompatibleBinary);
  CHECK_THAT(refused.error().message, Catch::Contains("built for TVM-FFI 0.1"));
  CHECK_THAT(refused.error().message, Catch::Contains("is 0.2.0"));
  CHECK_THAT(refused.error().message, Catch::Contains("apache-tvm-ffi>=0.1,<0.2"));
  CHECK((*runtime)->require(resolver::Version{0, 2}, "tvm-ffi02-cpu-x86_64-linux"));
}

TEST_CASE("a library that is not a TVM-FFI runtime is refused by name") {
  const auto libm = binary_format::find_on_library_path("libm.so.6", bare());
  REQUIRE(libm);
  const auto runtime = Runtime::open(RuntimeLocation{*libm, "KERNELHUB_TVM_FFI_LIBRARY"}, bare());
  REQUIRE_FALSE(runtime);
  CHECK(runtime.error().code == ErrorCode::kLoadFailed);
  CHECK_THAT(runtime.error().message, Catch::Contains("is not a TVM-FFI runtime"));
  CHECK_THAT(runtime.error().message, Catch::Contains("TVMFFIGetVersion"));
}

TEST_CASE("a runtime built for another cpu is refused by the file checks, before dlopen") {
  const std::filesystem::path i386 = "/lib32/libm.so.6";
  if (!std::filesystem::exists(i386)) return;  // no 32-bit libraries on this machine
  const auto runtime = Runtime::open(RuntimeLocation{i386, "KERNELHUB_TVM_FFI_LIBRARY"}, bare());
  REQUIRE_FALSE(runtime);
  CHECK(runtime.error().code == ErrorCode::kIncompatibleBinary);
  CHECK_THAT(runtime.error().message, Catch::Contains("it is built for i386 (32-bit), this process is x86_64"));
}

TEST_CASE("a file that is not a shared library is refused before dlopen") {
  const RuntimeLocation location{KERNELHUB_SOURCE_DIR "/README.md", "KERNELHUB_TVM_FFI_LIBRARY"};
  const auto runtime = Runtime::open(location, bare());
  REQUIRE_FALSE(runtime);
  CHECK(runtime.error().code == ErrorCode::kCorruptFile);
}

}  // namespace
}  // namespace kernelhub::tvm_ffi_loader
