// KernelLibrary: a TVM-FFI kernel library (`_<name>_<backend>_<rev>.so` of a tvm-ffi variant)
// loaded into this process, and its functions.
//
// load() runs the pre-flight (preflight.hpp) before anything of the kernel is loaded, checks the
// runtime's version against the variant's, makes the runtime global (RTLD_GLOBAL, so the kernel
// finds its TVMFFI* symbols) and dlopens the kernel by absolute path, RTLD_NOW | RTLD_LOCAL. Its
// functions are the exported `__tvm_ffi_<name>` symbols (TVM_FFI_DLL_EXPORT_TYPED_FUNC), each with
// its Signature where the library also exports `__tvm_ffi__metadata_<name>`.
//
// call() passes the arguments as TVM-FFI AnyViews to the function's C entry point
// (`int (void*, const TVMFFIAny*, int32_t, TVMFFIAny*)`); with a signature they are checked first.
// An error the kernel raises (-1, TVMFFIErrorMoveFromRaised) is an outcome, not an Error: its kind,
// message and backtrace are the kernel's. With CallOptions::stream, the stream is set
// (TVMFFIEnvSetStream, per thread) for the devices of the GPU tensor arguments during the call, then
// the previous one is restored: a CUDA kernel launches on it (TVMFFIEnvGetStream).
//
// Lifetime: a library is closed when the last reference goes (a returned tensor holds one). load()
// of a file already loaded returns the same instance. Thread safety: load() is serialised; a
// KernelLibrary is immutable and call() may run on any thread.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "kernelhub/base/environment_source.hpp"
#include "kernelhub/base/result.hpp"
#include "kernelhub/binary_format/internal/elf_file.hpp"
#include "kernelhub/resolver/version.hpp"
#include "kernelhub/tvm_ffi_loader/argument.hpp"
#include "kernelhub/tvm_ffi_loader/internal/runtime.hpp"
#include "kernelhub/tvm_ffi_loader/signature.hpp"

namespace kernelhub::tvm_ffi_loader {

struct CallOptions {
  std::optional<void*> stream;  // a cudaStream_t (hipStream_t) for the GPU tensors' devices
};

using Outcome = std::variant<Value, Runtime::Raised>;

class KernelLibrary : public std::enable_shared_from_this<KernelLibrary> {
 public:
  // `tvm_ffi_version`: the major.minor of the variant (tvm-ffi01 → 0.1), `variant` its name for
  // messages. `elf`: the file's ELF when the caller already parsed it. Errors: kNotFound,
  // kCorruptFile, kIncompatibleBinary (pre-flight, or another runtime version), kLoadFailed.
  static Result<std::shared_ptr<const KernelLibrary>> load(const std::filesystem::path& path,
                                                           std::shared_ptr<const Runtime> runtime,
                                                           const resolver::Version& tvm_ffi_version,
                                                           const std::string& variant, const EnvironmentSource& env,
                                                           const binary_format::ElfFile* elf = nullptr);

  const std::filesystem::path& path() const { return path_; }
  const Runtime& runtime() const { return *runtime_; }
  const std::vector<FunctionInfo>& functions() const { return functions_; }  // sorted by name
  const FunctionInfo* find(std::string_view name) const;

  // Errors: kNotFound (no such function), kOpSchemaMismatch (the arguments do not fit its
  // signature; nothing called), kInvalidArgument (a stream that cannot be set, a return value
  // kernelhub cannot represent).
  Result<Outcome> call(std::string_view name, std::span<const Argument> arguments,
                       const CallOptions& options = {}) const;

  struct Handles;  // the open library and each function's C entry point (kernel_library.cpp)
  KernelLibrary(std::filesystem::path path, std::shared_ptr<const Runtime> runtime, std::vector<FunctionInfo> functions,
                std::unique_ptr<Handles> handles);
  ~KernelLibrary();
  KernelLibrary(const KernelLibrary&) = delete;
  KernelLibrary& operator=(const KernelLibrary&) = delete;

 private:
  std::filesystem::path path_;
  std::shared_ptr<const Runtime> runtime_;
  std::vector<FunctionInfo> functions_;
  std::unique_ptr<Handles> handles_;
};

}  // namespace kernelhub::tvm_ffi_loader
