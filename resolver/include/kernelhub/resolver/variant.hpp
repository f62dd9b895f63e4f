// Variant: one build variant of a Hub kernel, the name of a `build/<variant>/` directory.
//
// Grammar (mirrors the `kernels` package, kernels/src/kernels/variants.py `parse_variant`):
//   torch<M><m>[-cxx11|-cxx98]-<backend>-<cpu>-<os>     torch arch build   torch215-cxx11-cu130-x86_64-linux
//   torch-stable-abi<M><m>-<backend>-<cpu>-<os>         torch stable ABI   torch-stable-abi211-cu126-x86_64-linux
//   tvm-ffi<M><m>-<backend>-<cpu>-<os>                  tvm-ffi build      tvm-ffi01-cu126-x86_64-linux
//   torch-<cpu|cuda|rocm|xpu|metal|npu|neuron|tpu>      noarch (pure Python / JIT)
//   torch-universal                                     legacy noarch
// Backends: cpu, metal, neuron, tpu, cu<M><m>, rocm<M><m>, xpu<YYYY><m>, cann<M><m>; the minor
// is the last digit (cu128 = CUDA 12.8, xpu20253 = oneAPI 2025.3). The torch major is one digit.
//
// parse() and to_string() round-trip exactly.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "kernelhub/base/result.hpp"
#include "kernelhub/resolver/version.hpp"

namespace kernelhub::resolver {

enum class BackendKind { kCpu, kCuda, kRocm, kXpu, kMetal, kCann, kNpu, kNeuron, kTpu };

struct Backend {
  BackendKind kind = BackendKind::kCpu;
  std::optional<Version> version;  // CUDA/ROCm/XPU/CANN toolkit version; none for the others

  // Parses a variant backend token ("cu128", "rocm71", "xpu20253", "cpu", "metal", ...).
  static Result<Backend> parse_token(std::string_view token);
  // Parses an environment backend ("cpu", "cuda12.8", "rocm7.1", "xpu2025.3", "metal", ...).
  static Result<Backend> parse_environment(std::string_view text);
  std::string to_token() const;        // "cu128"
  std::string to_environment() const;  // "cuda12.8"
  std::string_view kind_name() const;  // "cuda"
  bool operator==(const Backend&) const = default;
};

enum class Framework {
  kTorch,           // torch<M><m>[-cxxNN]-<backend>-<cpu>-<os>
  kTorchStableAbi,  // torch-stable-abi<M><m>-<backend>-<cpu>-<os>
  kTvmFfi,          // tvm-ffi<M><m>-<backend>-<cpu>-<os>
  kTorchNoarch,     // torch-<backend kind>
  kTorchUniversal,  // torch-universal
};

struct Variant {
  Framework framework = Framework::kTorch;
  Version framework_version;          // torch, stable-ABI or tvm-ffi version (arch variants)
  std::optional<bool> cxx11_abi;      // cxx11 → true, cxx98 → false, untagged → none
  Backend backend;                    // for noarch: only the kind
  std::string cpu;                    // x86_64, aarch64 (arch variants)
  std::string os;                     // linux, darwin, windows (arch variants)

  // Errors: kInvalidArgument naming the part of the name that does not parse.
  static Result<Variant> parse(std::string_view name);
  std::string to_string() const;
  bool is_arch() const { return framework != Framework::kTorchNoarch && framework != Framework::kTorchUniversal; }
  bool operator==(const Variant&) const = default;
};

}  // namespace kernelhub::resolver
