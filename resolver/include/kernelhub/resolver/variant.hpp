// Variant: one build variant of a Hub kernel, the name of a `build/<variant>/` directory.
//
// Grammar: that of the `kernels` package 0.19 (kernels/_internals/variants.py `parse_variant`,
// backends.py `parse_backend`), read the same way step by step. Two forms of arch variant: the
// legacy one, which kernel-builder wrote up to 0.17 and which counts as `cpython-3.9-abi3`, and
// the explicit one:
//   legacy    torch<M><m>[-cxx11|-cxx98]-<token>-<cpu>-<os>          torch215-cxx11-cu130-x86_64-linux
//             torch-stable-abi<M><m>-<token>-<cpu>-<os>               torch-stable-abi211-cu126-x86_64-linux
//             tvm-ffi<M><m>-<token>-<cpu>-<os>                        tvm-ffi01-cu126-x86_64-linux
//   explicit  torch-<M.m>[-cxx11|-cxx98]-<backend>-cpython-<M.m>-<abi3|abi3t>-<cpu>-<os>
//             torch-stable-abi-<M.m>-<backend>-cpython-...            tvm-ffi-<M.m>-<backend>-cpython-...
//             e.g. torch-2.15-cxx11-cpu-cpython-3.9-abi3-x86_64-linux, tvm-ffi-0.1-cuda-12.8-cpython-3.9-abi3-...
//   noarch    torch-<name>, mlx-<name>    (pure Python; <name> is any text: cpu, cuda, universal, ...)
//   sdk       sdk, sdk-<name>, sdk[-<backend>]-cpython-<M.m>-<abi>-<cpu>-<os>
// Legacy tokens: cpu, metal, neuron, tpu, cu<M><m>, rocm<M><m>, xpu<M><m>, cann<M><m>: the minor
// is the last digit (cu128 = CUDA 12.8, xpu20253 = 2025.3), except rocm714 = ROCm 7.14. Torch,
// stable-ABI and tvm-ffi legacy versions: the major is the first digit (torch215 = 2.15,
// tvm-ffi012 = 0.12). Explicit backends: cpu, metal, neuron, tpu, cuda-<M.m>, rocm-<M.m>,
// xpu-<M.m>, cann-<M.m>. The cpython version is the least the kernel's Python parts need; abi3t
// (free-threaded stable ABI, PEP 803) needs 3.15. <cpu> and <os> are any text, as in the
// `kernels` package (selection compares them with the machine's).
//
// Stricter than the `kernels` package, on purpose: every number is ASCII digits, at most 9 of
// them (a bigger one is a typed error, never a wraparound), without a leading zero. The `kernels`
// package reads `torch-2.015-...` as torch 2.15 and then fetches `build/torch-2.15-.../`, a
// folder that does not exist; here parse() and to_string() round-trip exactly, in either form,
// so the name selected is always the folder listed.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "kernelhub/base/result.hpp"
#include "kernelhub/resolver/version.hpp"

namespace kernelhub::resolver {

enum class BackendKind { kCpu, kCuda, kRocm, kXpu, kMetal, kCann, kNeuron, kTpu };

struct Backend {
  BackendKind kind = BackendKind::kCpu;
  std::optional<Version> version;  // CUDA/ROCm/XPU/CANN toolkit version; none for the others
  // The environment's version as it said it, where it says more than M.m (ROCm's "6.4.43482"):
  // the `kernels` package prints that in its reasons. Never part of a variant; not compared.
  std::string version_text;

  // Parses a legacy variant backend token ("cu128", "rocm71", "xpu20253", "cpu", "metal", ...).
  static Result<Backend> parse_token(std::string_view token);
  // Parses an explicit-form backend: "cpu", "metal", ... or a name and its "M.m" ("cuda", "12.8").
  static Result<Backend> parse_explicit(std::string_view name, std::optional<std::string_view> version);
  bool versioned() const {
    return kind == BackendKind::kCuda || kind == BackendKind::kRocm || kind == BackendKind::kXpu ||
           kind == BackendKind::kCann;
  }
  // Parses an environment backend ("cpu", "cuda12.8", "rocm7.1", "xpu2025.3", "metal", ...).
  static Result<Backend> parse_environment(std::string_view text);
  std::string to_token() const;        // "cu128"
  std::string to_explicit() const;     // "cuda-12.8"
  std::string to_environment() const;  // "cuda12.8"
  std::string_view kind_name() const;  // "cuda"
  bool operator==(const Backend& other) const { return kind == other.kind && version == other.version; }
};

enum class Framework {
  kTorch,           // torch<M><m>[-cxxNN]-..., torch-<M.m>[-cxxNN]-...
  kTorchStableAbi,  // torch-stable-abi<M><m>-..., torch-stable-abi-<M.m>-...
  kTvmFfi,          // tvm-ffi<M><m>-..., tvm-ffi-<M.m>-...
  kTorchNoarch,     // torch-<name>, torch-universal among them
  kMlxNoarch,       // mlx-<name>
  kSdk,             // sdk[...]: no framework
};

// How a name is written; the same variant can be written both ways (legacy ones only with
// cpython-3.9-abi3).
enum class NameForm { kLegacy, kExplicit };

// The Python the compiled parts are built for: at least `min`, with the stable ABI `abi3` (GIL)
// or `abi3t` (free-threaded, PEP 803, Python >= 3.15).
struct PythonAbi {
  Version min{3, 9};
  bool abi3t = false;
  bool operator==(const PythonAbi&) const = default;
};

struct Variant {
  Framework framework = Framework::kTorch;
  NameForm form = NameForm::kLegacy;
  Version framework_version;      // torch, stable-ABI or tvm-ffi version (arch variants)
  std::optional<bool> cxx11_abi;  // cxx11 → true, cxx98 → false, untagged → none
  Backend backend;                // arch variants and `sdk-<backend>-cpython-...`
  // noarch variants and `sdk-<name>`: the backend name as written (any text, "" included).
  std::optional<std::string> noarch_backend;
  bool any_backend = false;  // `sdk` and `sdk-cpython-...`: no backend named
  bool compiled = false;     // names a cpython, cpu and os (arch and compiled sdk variants)
  PythonAbi python;          // when compiled
  std::string cpu;           // when compiled: x86_64, aarch64, ...
  std::string os;            // when compiled: linux, darwin, windows, ...

  // Errors: kInvalidArgument naming the part of the name that does not parse (an out-of-range
  // number among them).
  static Result<Variant> parse(std::string_view name);
  std::string to_string() const;
  // A torch, stable-ABI or tvm-ffi build: compiled for one framework version, cpu and os.
  bool is_arch() const {
    return framework == Framework::kTorch || framework == Framework::kTorchStableAbi || framework == Framework::kTvmFfi;
  }
  bool is_noarch() const { return framework == Framework::kTorchNoarch || framework == Framework::kMlxNoarch; }
  bool is_universal() const { return is_noarch() && noarch_backend == "universal"; }
  bool is_compiled_sdk() const { return framework == Framework::kSdk && compiled; }
  // The same build, however its name is written (the `kernels` package's equality, whose
  // variant classes leave the name form out of comparisons).
  bool same_build(const Variant& other) const;
  bool operator==(const Variant&) const = default;
};

}  // namespace kernelhub::resolver
