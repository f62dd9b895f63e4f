// Loadable: what the process that will load a kernel can load. An input of select() as data, set
// by whoever knows the process; the resolver itself never looks.
//
//   libtorch  LibTorch is in the process: torch and torch-stable-abi builds can load. Without it
//             they are rejected first ("needs LibTorch"), so such a process considers tvm-ffi
//             builds only, and its trace says why.
//   python    a Python interpreter imports the variant: pure-Python variants (torch-<name>,
//             torch-universal, mlx-<name>) and sdk variants can load.
//   tvm_ffi   a TVM-FFI runtime can load tvm-ffi builds; which version is Environment::tvm_ffi,
//             and a build of another version is rejected as the `kernels` package rejects it.
//
// A Python process loads everything the `kernels` package does: for torch builds, what decides is
// Environment::torch (none without torch), exactly as there. Where the process has LibTorch and
// can load tvm-ffi builds, they rank as the `kernels` package ranks them (after torch builds).
//
// The processes kernelhub runs in, and who says so:
//   python_process()       the Python shim (python/src/core) and `kernelhub variants` by default
//   cpp_process()          C++ with LibTorch: get_kernel, `kernelhub-get`; pass tvm_ffi = true
//                          where the process has a TVM-FFI loader
//   torch_free_process()   C++ without LibTorch that loads tvm-ffi kernels; with no torch to take
//                          it from, the caller also sets Environment::backend (cuda12.8 where it
//                          runs CUDA kernels: the `kernels` package reads libcudart's version) and
//                          Environment::tvm_ffi (its libtvm_ffi's major.minor)
//
// Thread safety: a value type.
#pragma once

namespace kernelhub::resolver {

struct Loadable {
  bool libtorch = true;
  bool python = true;
  bool tvm_ffi = true;

  static constexpr Loadable python_process() { return {}; }
  static constexpr Loadable cpp_process(bool tvm_ffi = false) { return {true, false, tvm_ffi}; }
  static constexpr Loadable torch_free_process() { return {false, false, true}; }

  bool operator==(const Loadable&) const = default;
};

}  // namespace kernelhub::resolver
