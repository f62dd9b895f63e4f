// kernelhub::tvm_ffi: get TVM-FFI kernels from a Hub into a C++ program that has no LibTorch and no
// Python (an inference engine, a JAX/XLA custom call, a game engine), and call them on DLPack tensors.
//
//   auto kernel = kernelhub::tvm_ffi::get_kernel("kernelhub/reference-kernels", {.version = 1});
//   kernel.call("rms_norm", &out, &x, std::nullopt, 1e-6);  // rms_norm_cpu in a CPU variant
//
// get_kernel resolves, selects, downloads, verifies and trusts exactly as kernelhub::get_kernel
// (kernelhub.hpp) does, with the same options, cache, lock files and LOCAL_KERNELS, among the
// repo's tvm-ffi variants (`tvm-ffi01-cpu-x86_64-linux`, `tvm-ffi01-cu130-x86_64-linux`): torch
// variants need LibTorch and say so in the trace. The TVM-FFI runtime (libtvm_ffi.so) is found at run
// time (tvm_ffi_loader/runtime.hpp: already loaded, KERNELHUB_TVM_FFI_LIBRARY, the Python
// environment's apache-tvm-ffi package, the library search path) and must have the variant's
// major.minor. The kernel library is pre-flighted before anything of it is loaded.
//
// Arguments are DLPack tensors (DLTensor*, the caller's memory, passed by pointer), integers,
// floats, bools, strings, DLDevice, DLDataType and std::nullopt/std::optional (None); where the
// kernel exports its signature they are checked before the call (OpSchemaMismatchError, nothing
// called). An error the kernel raises comes back as KernelRaisedError with the kernel's own kind and
// message. CUDA functions launch on the stream given to on_stream() (TVMFFIEnvSetStream for the
// tensors' devices, restored after the call), else on the stream this thread last set through
// TVM-FFI, by default CUDA's default stream.
//
// Errors are the exceptions of kernelhub/fetch/errors.hpp (fetch/). get_kernel may be called from several threads; a
// Kernel is immutable and its functions may be called from any thread.
#pragma once

#include <array>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernelhub/fetch/errors.hpp"
#include "kernelhub/fetch/fetched_kernel.hpp"
#include "kernelhub/fetch/get_kernel_options.hpp"
#include "kernelhub/tvm_ffi_loader/argument.hpp"
#include "kernelhub/tvm_ffi_loader/signature.hpp"

namespace kernelhub::tvm_ffi_loader {
class KernelLibrary;  // a loaded kernel library
                      // (tvm_ffi_loader/internal/kernelhub/tvm_ffi_loader/internal/kernel_library.hpp)
}

namespace kernelhub::tvm_ffi {

using tvm_ffi_loader::Argument;
using tvm_ffi_loader::FunctionInfo;
using tvm_ffi_loader::None;
using tvm_ffi_loader::OwnedTensor;
using tvm_ffi_loader::Signature;
using tvm_ffi_loader::Value;

class Kernel;
// Loads `repo_id` ("org/name"), or the directory LOCAL_KERNELS names for it.
Kernel get_kernel(std::string_view repo_id, const GetKernelOptions& options = {});
// Loads the best tvm-ffi variant under `path`: path/<variant>/, path/build/<variant>/, or path itself.
Kernel get_local_kernel(const std::filesystem::path& path, std::optional<std::string> backend = std::nullopt);

// One function of a loaded kernel; keeps the kernel library loaded.
class Function {
 public:
  const std::string& name() const { return name_; }
  const std::optional<Signature>& signature() const;

  template <typename... Args>
  Value operator()(Args&&... args) const {
    const std::array<Argument, sizeof...(Args)> packed{Argument(std::forward<Args>(args))...};
    return call(packed);
  }
  // The same, with the GPU tensors' work on `stream` (a cudaStream_t).
  template <typename... Args>
  Value on_stream(void* stream, Args&&... args) const {
    const std::array<Argument, sizeof...(Args)> packed{Argument(std::forward<Args>(args))...};
    return call(packed, stream);
  }
  Value call(std::span<const Argument> arguments, std::optional<void*> stream = std::nullopt) const;

  Function(std::shared_ptr<const tvm_ffi_loader::KernelLibrary> library, std::string name)
      : library_(std::move(library)), name_(std::move(name)) {}

 private:
  std::shared_ptr<const tvm_ffi_loader::KernelLibrary> library_;
  std::string name_;
};

class Kernel : public FetchedKernel {
 public:
  // Every function the library exports, with its signature where it has one, sorted by name.
  const std::vector<FunctionInfo>& functions() const;
  // `name` itself, else `<name>_<backend>` (kernel-builder's tvm-ffi kernels export one function
  // per backend: rms_norm_cpu, rms_norm_cuda). NotFoundError lists the functions there are.
  Function function(std::string_view name) const;
  template <typename... Args>
  Value call(std::string_view name, Args&&... args) const {
    return function(name)(std::forward<Args>(args)...);
  }

  // variant(), revision(), path(), metadata(), decisions(), timings(), warnings(): FetchedKernel's.
  const std::string& backend() const;  // the variant's backend kind: "cpu", "cuda", ...
  const std::filesystem::path& library_path() const;
  std::string runtime_version() const;                // TVM-FFI of this process, "0.1.16"
  const std::filesystem::path& runtime_path() const;  // its libtvm_ffi.so
  const std::string& runtime_found_by() const;        // how it was found

  struct State;
  explicit Kernel(std::shared_ptr<const State> state);

 private:
  std::shared_ptr<const State> state_;
};

}  // namespace kernelhub::tvm_ffi
