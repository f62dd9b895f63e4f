// Runtime: the TVM-FFI runtime library (libtvm_ffi.so) of this process, found, checked and
// opened without LibTorch or Python.
//
// locate_runtime() takes the first of:
//   1. a libtvm_ffi.so already loaded in this process (a host that embeds TVM-FFI, or Python's
//      tvm_ffi package): a process holds one runtime, so it is the only one to use;
//   2. KERNELHUB_TVM_FFI_LIBRARY, the path of a libtvm_ffi.so;
//   3. the runtime this program was built with: libtvm_ffi.so in the RUNPATH of the executable or
//      shared library kernelhub is linked into. The kernelhub package carries the runtime it is
//      built against in lib/kernelhub/ and links its programs to look there (the installed
//      `kernelhub`, a program linked with kernelhub::tvm_ffi: cmake/KernelhubInstall.cmake); the
//      build's `kernelhub` looks where the build found it. So a program runs as built, with no
//      Python on the machine;
//   4. the apache-tvm-ffi package of the Python environment that would run here
//      (<site-packages>/tvm_ffi/lib/libtvm_ffi.so), found from files as resolver/python_environment.hpp
//      finds it, without starting Python;
//   5. libtvm_ffi.so on the library search path (LD_LIBRARY_PATH, ld.so.conf, system directories).
// "Not there" moves on to the next; a named file that does not exist is an error. Either error
// says where the runtime was looked for and what to set.
//
// Runtime::open() runs the pre-flight's file checks on it (binary_format/file_checks.hpp), opens it
// RTLD_LOCAL and reads its version (TVMFFIGetVersion). Only when a kernel of that version is loaded
// does make_global() promote it to RTLD_GLOBAL (kernel libraries resolve their TVMFFI* symbols
// there), so a runtime of another version never becomes visible to other libraries.
//
// Lifetime: a Runtime closes its library when the last reference goes (kernel libraries and the
// values they return hold one); of_process() keeps the first one opened for the life of the
// process, since objects it made may outlive every kernel. Thread safety: of_process() is serialised;
// a Runtime is immutable, and its calls are thread-safe (TVM-FFI keeps errors and streams per thread).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "kernelhub/base/environment_source.hpp"
#include "kernelhub/base/result.hpp"
#include "kernelhub/resolver/version.hpp"

namespace kernelhub::tvm_ffi_loader {

struct RuntimeLocation {
  std::filesystem::path path;
  std::string found_by;  // "already loaded in this process", "KERNELHUB_TVM_FFI_LIBRARY", ...
};

// The version TVMFFIGetVersion reports.
struct RuntimeVersion {
  std::uint32_t major = 0;
  std::uint32_t minor = 0;
  std::uint32_t patch = 0;
  resolver::Version major_minor() const;  // what a variant name carries (tvm-ffi01 = 0.1)
  std::string to_string() const;          // "0.1.16"
};

// Errors: kNotFound (KERNELHUB_TVM_FFI_LIBRARY names no file; or none anywhere: the message says
// where it looked and how to install one).
Result<RuntimeLocation> locate_runtime(const EnvironmentSource& env);

// Where the program holding this code was built to find libraries (step 3): the object (the
// executable, or the shared library kernelhub is linked into) and its RUNPATH directories.
struct ProgramLibraryDirs {
  std::filesystem::path object;
  std::vector<std::filesystem::path> dirs;
};
ProgramLibraryDirs program_library_dirs();
// locate_runtime() with step 3's directories given (tests: a program built to look elsewhere).
Result<RuntimeLocation> locate_runtime(const EnvironmentSource& env, const ProgramLibraryDirs& program);

class Runtime {
 public:
  // Opens the runtime at `location`. Errors: kIncompatibleBinary (the file checks: another cpu,
  // a newer glibc), kLoadFailed (dlopen, or a missing TVMFFI* entry point: not a TVM-FFI runtime).
  static Result<std::shared_ptr<const Runtime>> open(const RuntimeLocation& location, const EnvironmentSource& env);
  // The runtime of this process: the first opened, else locate_runtime() then open().
  static Result<std::shared_ptr<const Runtime>> of_process(const EnvironmentSource& env);

  const RuntimeLocation& location() const { return location_; }
  const RuntimeVersion& version() const { return version_; }

  // A kernel built for tvm-ffi `wanted` (major.minor, from its variant name) runs on this runtime
  // only if they are equal, as the kernels package requires. Errors: kIncompatibleBinary saying
  // which runtime was found, where, and what to install.
  Status require(const resolver::Version& wanted, const std::string& variant) const;
  // Makes the runtime's symbols visible to libraries loaded after it (RTLD_GLOBAL). Idempotent.
  Status make_global() const;

  // The C ABI, for kernel_library.cpp. Handles are TVMFFIObjectHandle.
  struct Raised {
    std::string kind;       // "RuntimeError", "ValueError", "TypeError", ...
    std::string message;    // the kernel's own words
    std::string backtrace;  // TVM-FFI's, most recent call first; may be empty
  };
  // The error a failed call left in this thread (TVMFFIErrorMoveFromRaised), then released.
  Raised take_raised() const;
  void release(void* object) const;  // TVMFFIObjectDecRef
  // TVMFFIEnvSetStream for (device_type, device_id) on this thread; returns the previous stream.
  Result<void*> set_stream(std::int32_t device_type, std::int32_t device_id, void* stream) const;
  void* current_stream(std::int32_t device_type, std::int32_t device_id) const;  // TVMFFIEnvGetStream

  struct Api;  // the open library and its entry points (runtime.cpp)
  Runtime(RuntimeLocation location, RuntimeVersion version, std::unique_ptr<const Api> api);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

 private:
  RuntimeLocation location_;
  RuntimeVersion version_;
  std::unique_ptr<const Api> api_;
};

}  // namespace kernelhub::tvm_ffi_loader
