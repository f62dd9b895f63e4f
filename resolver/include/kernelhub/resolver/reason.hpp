// Reason: why a build variant was accepted or rejected, as a value. Each alternative is one check
// of select() or the GPU fit, with what it compared; ReasonCode names it.
//
// Text is made at the edge only, by to_string(): the `kernels` package's sentences for select()'s
// checks (kernels/src/kernels/variants.py `_check_variants`, backends as variant tokens "cu128",
// absent versions as Python's "None"), gpu_fit's for the GPU checks. Every printer (format_trace,
// the CLI, its --json, the Python shim, error messages) goes through it, so the sentences are
// the same everywhere. code_name() is a stable machine name ("torch_version") for JSON.
//
// Thread safety: value types and pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "kernelhub/resolver/gpu_fit.hpp"
#include "kernelhub/resolver/variant.hpp"
#include "kernelhub/resolver/version.hpp"

namespace kernelhub::resolver {

enum class ReasonCode {
  kCompatible,           // accepted
  kUnparsableName,       // not a build variant name
  kFreeThreadedPython,   // an abi3 build on free-threaded Python (it needs abi3t)
  kPythonTooOld,         // the variant's cpython minimum is above this Python
  kCpu,                  // built for another cpu
  kOs,                   // built for another os
  kTorchVersion,         // torch major.minor differs
  kCxxAbi,               // cxx11/cxx98 tag differs from torch's C++ ABI
  kStableAbiTooNew,      // stable-ABI version above torch's
  kNoLibTorch,           // torch or stable-ABI build in a process without LibTorch (tvm-ffi builds only)
  kTvmFfiNotLoadable,    // tvm-ffi build in a process without a TVM-FFI loader (get_kernel)
  kTvmFfiVersion,        // tvm-ffi version differs
  kCudaVersion,          // CUDA of another major, or a newer minor
  kRocmVersion,          // ROCm of another major, or a newer minor
  kBackend,              // another backend (arch build)
  kPurePython,           // noarch or universal in a process without Python
  kNoarchBackend,        // noarch build of another backend kind
  kMlxMissing,           // an MLX noarch build, and no MLX here
  kSdkNotLoadable,       // an sdk variant (build-time files) in a process without Python
  kDriverTooOld,         // GPU fit: the driver's CUDA major is below the variant's
  kPtxNeedsNewerDriver,  // GPU fit: only PTX fits a GPU, and the driver cannot JIT it
  kNoCodeForGpu,         // GPU fit: neither SASS nor PTX for a GPU
};

namespace reason {

// Field names: `variant` is what the build variant says, `system` what the environment has.
struct UnparsableName {
  std::string message;  // Variant::parse's error
  bool operator==(const UnparsableName&) const = default;
};
struct FreeThreadedPython {
  bool operator==(const FreeThreadedPython&) const = default;
};
struct PythonTooOld {
  Version variant;  // the least Python it needs
  Version system;
  bool operator==(const PythonTooOld&) const = default;
};
struct CpuMismatch {
  std::string variant;
  std::string system;
  bool operator==(const CpuMismatch&) const = default;
};
struct OsMismatch {
  std::string variant;
  std::string system;
  bool operator==(const OsMismatch&) const = default;
};
struct TorchVersion {
  Version variant;
  std::optional<Version> system;  // none: no torch
  bool operator==(const TorchVersion&) const = default;
};
struct CxxAbi {
  std::optional<bool> variant;  // true: cxx11
  std::optional<bool> system;   // none off Linux, where the `kernels` package does not know it
  bool operator==(const CxxAbi&) const = default;
};
struct StableAbiTooNew {
  Version variant;
  std::optional<Version> system;  // torch's
  bool operator==(const StableAbiTooNew&) const = default;
};
struct TvmFfiNotLoadable {
  bool operator==(const TvmFfiNotLoadable&) const = default;
};
struct NoLibTorch {
  bool operator==(const NoLibTorch&) const = default;
};
struct TvmFfiVersion {
  Version variant;
  std::optional<Version> system;
  bool operator==(const TvmFfiVersion&) const = default;
};
struct CudaVersion {
  std::optional<Version> variant;
  std::optional<Version> system;  // torch's CUDA
  bool operator==(const CudaVersion&) const = default;
};
struct RocmVersion {
  std::optional<Version> variant;
  std::optional<Version> system;  // torch's ROCm
  bool operator==(const RocmVersion&) const = default;
};
struct BackendMismatch {
  Backend variant;
  Backend system;                     // the selected backend
  NameForm form = NameForm::kLegacy;  // the variant's, which its backend is printed in
  bool noarch = false;                // an `sdk-<kind>` variant: kinds compared, printed as kinds
  bool operator==(const BackendMismatch&) const = default;
};
struct PurePython {
  bool operator==(const PurePython&) const = default;
};
struct NoarchBackend {
  BackendKind variant;
  BackendKind system;
  bool operator==(const NoarchBackend&) const = default;
};
struct MlxMissing {
  bool operator==(const MlxMissing&) const = default;
};
struct SdkNotLoadable {
  bool operator==(const SdkNotLoadable&) const = default;
};
// The device code cannot run here. REQUIRES: !fit.runs(); its kind is the code.
struct GpuMismatch {
  GpuFit fit;
  bool operator==(const GpuMismatch&) const = default;
};
// Accepted; `fit` says how it runs once the GPU fit has checked its device code.
struct Compatible {
  std::optional<GpuFit> fit;
  bool operator==(const Compatible&) const = default;
};

}  // namespace reason

// Rejections first, so that a default Reason accepts nothing.
using Reason =
    std::variant<reason::UnparsableName, reason::FreeThreadedPython, reason::PythonTooOld, reason::CpuMismatch,
                 reason::OsMismatch, reason::TorchVersion, reason::CxxAbi, reason::StableAbiTooNew,
                 reason::TvmFfiNotLoadable, reason::NoLibTorch, reason::TvmFfiVersion, reason::CudaVersion,
                 reason::RocmVersion, reason::BackendMismatch, reason::PurePython, reason::NoarchBackend,
                 reason::MlxMissing, reason::SdkNotLoadable, reason::GpuMismatch, reason::Compatible>;

ReasonCode reason_code(const Reason& r);
inline bool is_accepted(const Reason& r) {
  return std::holds_alternative<reason::Compatible>(r);
}

// "torch_version", "no_code_for_gpu", ...: stable, for machine-readable output.
std::string_view code_name(ReasonCode code);

// The sentence, e.g. "Torch version (2.14) does not match environment Torch version (2.15)";
// "compatible" when accepted, with how it runs once the GPU fit checked it:
// "compatible (sm_90 SASS)".
std::string to_string(const Reason& r);

// The GPU fit in one line: "sm_90 SASS", "sm_80 SASS runs on sm_86", "JIT from compute_90 PTX for
// sm_120, compiled at first load", or why it does not run; with several GPUs, "GPU 0: ...; GPU 1:
// ..." (for a rejection, only the GPUs it fails on).
std::string to_string(const GpuFit& fit);

}  // namespace kernelhub::resolver
