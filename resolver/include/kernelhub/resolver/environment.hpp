// Environment: what the machine that will run a kernel is, as variant selection sees it.
//
// detect() probes, in order, and any field set by an override wins over its probe:
//   1. os, cpu            uname(2)
//   2. glibc              gnu_get_libc_version()
//   3. torch, C++ ABI,    given by the caller (TorchRuntime): the resolver never links torch;
//      torch backend      the loader layer reports the LibTorch this process runs with, and
//                         a process without LibTorch passes find_torch() (torch_lookup.hpp)
//   4. CUDA driver, GPUs  libcuda.so.1 through dlopen (see cuda_probe.hpp); absent → empty
//   5. overrides          KERNELHUB_OS, KERNELHUB_CPU, KERNELHUB_GLIBC, KERNELHUB_PYTHON,
//                         KERNELHUB_TORCH, KERNELHUB_CXX11_ABI, KERNELHUB_BACKEND,
//                         KERNELHUB_CUDA_DRIVER, KERNELHUB_GPUS, KERNELHUB_TVM_FFI,
//                         KERNELHUB_MLX, KERNELHUB_MACOS
// KERNELHUB_TORCH is a TorchSpec (2.13, 2.13.0+cu130): with a backend it sets torch's backend too.
// KERNELHUB_PYTHON is M.m, with a `t` for a free-threaded build (3.13t). An empty
// KERNELHUB_GPUS, KERNELHUB_CUDA_DRIVER or KERNELHUB_TVM_FFI means none.
// The Python side (python, python_free_threaded, tvm_ffi, mlx) is never probed here: the caller
// that knows the Python sets it (the shim from its interpreter, the CLI from the Python
// environment's files: python_environment.hpp), and a C++ process without Python leaves python
// unset (no cpython check applies). A C++ process with a TVM-FFI loader sets tvm_ffi to that
// runtime's version.
// The selected backend is torch's backend, except that a CUDA torch on a machine without a CUDA
// driver selects cpu: the `kernels` package would pick a CUDA variant there that cannot run. A
// KERNELHUB_TORCH with a backend other than cpu (2.15.0+cu130, +rocm7.1, +xpu) names the target
// machine instead: its backend is selected whatever this one has, and this machine's driver and
// GPUs are dropped (KERNELHUB_CUDA_DRIVER and KERNELHUB_GPUS give the target's), so without
// KERNELHUB_GPUS the GPU fit is skipped; backend_reason says so.
//
// Thread safety: a value type. detect() may be called from any thread.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kernelhub/base/environment_source.hpp"
#include "kernelhub/base/result.hpp"
#include "kernelhub/resolver/variant.hpp"
#include "kernelhub/resolver/version.hpp"

namespace kernelhub::resolver {

// What the LibTorch of this process is; filled by the loader layer or by overrides.
struct TorchRuntime {
  std::optional<Version> version;  // 2.15
  std::optional<bool> cxx11_abi;   // _GLIBCXX_USE_CXX11_ABI of the build
  Backend backend;                 // cuda13.2 for the PyPI wheel, cpu for a CPU build
};

// The Python that will import the kernel, as selection needs it; filled by the caller that knows
// it (the shim from its interpreter, the CLI from the Python environment's files).
struct PythonRuntime {
  Version version;                 // 3.11
  bool free_threaded = false;      // a free-threaded (no-GIL) build, 3.13t
  bool mlx = false;                // the mlx package can be imported
  std::optional<Version> tvm_ffi;  // the tvm_ffi package's version, when it is installed
  bool operator==(const PythonRuntime&) const = default;
};

struct ComputeCapability {
  int major = 0;
  int minor = 0;
  static Result<ComputeCapability> parse(std::string_view text);  // "9.0"
  std::string to_string() const;
  auto operator<=>(const ComputeCapability&) const = default;
};

struct Environment {
  std::string os;                       // linux, darwin, windows
  std::string cpu;                      // x86_64, aarch64
  std::optional<Version> glibc;         // 2.36
  std::optional<Version> python;        // 3.11, when a Python runs this process or is named
  bool python_free_threaded = false;    // a free-threaded (no-GIL) CPython
  std::optional<Version> torch;         // 2.15
  std::optional<bool> cxx11_abi;        // true for every torch since 2.7
  std::optional<Version> tvm_ffi;       // the TVM-FFI runtime's version (tvm_ffi package or libtvm_ffi)
  bool mlx = false;                     // MLX can be imported (mlx-<name> variants need it)
  std::optional<Version> macos;         // macOS version (Metal builds need 26); KERNELHUB_MACOS only
  Backend torch_backend;                // what torch was built with
  Backend backend;                      // what selection uses (see the header comment)
  std::string backend_reason;           // why `backend` differs from `torch_backend`, if it does
  std::optional<Version> cuda_driver;   // the CUDA version the driver supports, 13.0
  std::vector<ComputeCapability> gpus;  // every visible GPU, CUDA_VISIBLE_DEVICES honoured

  // Probes this machine, takes the torch and the Python given (none: no Python imports the
  // kernel), then applies overrides from `env`. Errors: kInvalidArgument when an override does
  // not parse (naming the variable and the expected form).
  static Result<Environment> detect(const TorchRuntime& torch, const EnvironmentSource& env,
                                    const std::optional<PythonRuntime>& python = std::nullopt);

  // Sets the Python side (python, python_free_threaded, mlx, tvm_ffi) to `python`'s, or clears it.
  void set_python(const std::optional<PythonRuntime>& python);

  // Applies the KERNELHUB_* overrides in `env` to this environment.
  Status apply_overrides(const EnvironmentSource& env);

  // The variant name a kernel built for exactly this environment has, as kernel-builder names it:
  // torch<M><m>-cxx11-<backend>-<cpu>-<os>. None without torch.
  std::optional<Variant> native_variant() const;
};

}  // namespace kernelhub::resolver
