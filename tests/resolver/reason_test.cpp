#include "kernelhub/resolver/reason.hpp"

#include <set>

#include <catch2/catch.hpp>

#include "cuda_targets.hpp"

namespace kernelhub::resolver {
namespace {

using testing::targets;

GpuFit fit(std::vector<CudaTarget> code, std::vector<ComputeCapability> gpus, std::optional<Version> driver,
           std::optional<Version> toolkit) {
  return fit_gpus(GpuFitInput{std::move(code), std::move(gpus), driver, toolkit});
}

struct Example {
  Reason reason;
  std::string text;       // what every printer shows
  std::string_view name;  // the stable --json code
};

// One example per code, with today's text. No default: a new ReasonCode without an example here
// does not compile (-Wswitch, warnings are errors).
Example example(ReasonCode code) {
  switch (code) {
    case ReasonCode::kCompatible: return {reason::Compatible{}, "compatible", "compatible"};
    case ReasonCode::kUnparsableName:
      return {reason::UnparsableName{"`x` is not a build variant name: expected it to start with torch"},
              "`x` is not a build variant name: expected it to start with torch", "unparsable_name"};
    case ReasonCode::kFreeThreadedPython:
      return {reason::FreeThreadedPython{}, "abi3 is not supported on free-threaded Python, abi3t is required",
              "free_threaded_python"};
    case ReasonCode::kPythonTooOld:
      return {reason::PythonTooOld{{3, 12}, {3, 10}}, "Python 3.12 or later is required, system Python version is 3.10",
              "python_too_old"};
    case ReasonCode::kCpu:
      return {reason::CpuMismatch{"aarch64", "x86_64"}, "CPU (aarch64) does not match system CPU (x86_64)", "cpu"};
    case ReasonCode::kOs:
      return {reason::OsMismatch{"windows", "linux"}, "OS (windows) does not match system OS (linux)", "os"};
    case ReasonCode::kTorchVersion:
      return {reason::TorchVersion{{2, 14}, Version{2, 15}},
              "Torch version (2.14) does not match environment Torch version (2.15)", "torch_version"};
    case ReasonCode::kCxxAbi:
      return {reason::CxxAbi{false, true}, "Torch CXX11 ABI (False) does not match environment Torch CXX11 ABI (True)",
              "cxx_abi"};
    case ReasonCode::kStableAbiTooNew:
      return {reason::StableAbiTooNew{{2, 16}, Version{2, 15}},
              "Torch stable ABI version (2.16) is too new for environment Torch version (2.15)", "stable_abi_too_new"};
    case ReasonCode::kTvmFfiNotLoadable:
      return {reason::TvmFfiNotLoadable{}, "tvm-ffi variant; this process has no TVM-FFI loader",
              "tvm_ffi_not_loadable"};
    case ReasonCode::kNoLibTorch:
      return {reason::NoLibTorch{}, "needs LibTorch, which this process does not have; only tvm-ffi variants load here",
              "no_libtorch"};
    case ReasonCode::kTvmFfiVersion:
      return {reason::TvmFfiVersion{{0, 1}, Version{0, 2}},
              "tvm-ffi version (0.1) does not match environment tvm-ffi version (0.2)", "tvm_ffi_version"};
    case ReasonCode::kCudaVersion:
      return {reason::CudaVersion{Version{12, 9}, Version{12, 8}},
              "CUDA version (12.9) is not compatible with system CUDA version (12.8)", "cuda_version"};
    case ReasonCode::kRocmVersion:
      return {reason::RocmVersion{Version{7, 2}, Version{7, 1}},
              "ROCm version (7.2) is not compatible with system ROCm version (7.1)", "rocm_version"};
    case ReasonCode::kBackend:
      return {reason::BackendMismatch{Backend{BackendKind::kCpu, {}}, Backend{BackendKind::kCuda, Version{12, 8}}},
              "backend (cpu) does not match selected backend (cu128)", "backend"};
    case ReasonCode::kPurePython:
      return {reason::PurePython{}, "pure-Python variant; only a Python process can load it", "pure_python"};
    case ReasonCode::kNoarchBackend:
      return {reason::NoarchBackend{BackendKind::kRocm, BackendKind::kCann},
              "backend (rocm) does not match system backend (cann) and is not universal", "noarch_backend"};
    case ReasonCode::kMlxMissing:
      return {reason::MlxMissing{}, "MLX is not installed in the environment", "mlx_missing"};
    case ReasonCode::kSdkNotLoadable:
      return {reason::SdkNotLoadable{}, "sdk variant: build-time files for a Python build, not a loadable kernel",
              "sdk_not_loadable"};
    case ReasonCode::kDriverTooOld:
      return {reason::GpuMismatch{fit(targets({"sm_90"}), {{9, 0}}, Version{12, 9}, Version{13, 0})},
              "built with CUDA 13.0; this driver supports CUDA 12.9 and runs CUDA 12.x builds at most (CUDA 13.x "
              "needs driver 580 or newer)",
              "driver_too_old"};
    case ReasonCode::kPtxNeedsNewerDriver:
      return {reason::GpuMismatch{fit(targets({"compute_90"}), {{12, 0}}, Version{12, 8}, Version{12, 9})},
              "built for compute_90; this GPU is sm_120 and only compute_90 (built with CUDA 12.9) fits it, which "
              "needs a driver for CUDA 12.9 or newer to JIT-compile; this driver supports CUDA 12.8",
              "ptx_needs_newer_driver"};
    case ReasonCode::kNoCodeForGpu:
      return {reason::GpuMismatch{fit(targets({"sm_80", "sm_90"}), {{12, 0}}, Version{13, 0}, Version{13, 0})},
              "built for sm_80, sm_90; this GPU is sm_120 and no PTX is included", "no_code_for_gpu"};
  }
  FAIL("no example for code " << static_cast<int>(code));
  return {};
}

constexpr int kLastCode = static_cast<int>(ReasonCode::kNoCodeForGpu);

TEST_CASE("every reason code renders its sentence and has a distinct stable name") {
  std::set<std::string_view> names;
  for (int i = 0; i <= kLastCode; ++i) {
    const auto code = static_cast<ReasonCode>(i);
    const Example e = example(code);
    INFO("code " << i << ": " << e.name);
    CHECK(reason_code(e.reason) == code);
    CHECK(to_string(e.reason) == e.text);
    CHECK(code_name(code) == e.name);
    CHECK(names.insert(code_name(code)).second);
    CHECK(is_accepted(e.reason) == (code == ReasonCode::kCompatible));
  }
  CHECK(names.size() == static_cast<std::size_t>(kLastCode + 1));
}

TEST_CASE("a default reason accepts nothing") {
  const Reason none;
  CHECK_FALSE(is_accepted(none));
}

TEST_CASE("absent versions and ABIs print as the kernels package prints None") {
  CHECK(to_string(reason::TorchVersion{{2, 15}, std::nullopt}) ==
        "Torch version (2.15) does not match environment Torch version (None)");
  CHECK(to_string(reason::CxxAbi{true, std::nullopt}) ==
        "Torch CXX11 ABI (True) does not match environment Torch CXX11 ABI (None)");
  CHECK(to_string(reason::CudaVersion{std::nullopt, Version{12, 8}}) ==
        "CUDA version (None) is not compatible with system CUDA version (12.8)");
  CHECK(to_string(reason::TvmFfiVersion{{0, 1}, std::nullopt}) ==
        "tvm-ffi version (0.1) does not match environment tvm-ffi version (None)");
}

TEST_CASE("an accepted reason says how the binary runs once the GPU fit checked it") {
  CHECK(to_string(reason::Compatible{fit(targets({"sm_90"}), {{9, 0}}, Version{13, 0}, Version{13, 0})}) ==
        "compatible (sm_90 SASS)");
  CHECK(to_string(reason::Compatible{fit(targets({"sm_80"}), {{8, 6}}, Version{13, 0}, Version{13, 0})}) ==
        "compatible (sm_80 SASS runs on sm_86)");
  CHECK(to_string(reason::Compatible{fit(targets({"compute_90"}), {{12, 0}}, std::nullopt, std::nullopt)}) ==
        "compatible (JIT from compute_90 PTX for sm_120, compiled at first load; driver version unknown)");
  CHECK(to_string(reason::Compatible{fit({}, {{9, 0}}, Version{13, 0}, Version{13, 0})}) ==
        "compatible (no device code in the binary to check)");
}

TEST_CASE("a fit with nothing to check says why") {
  CHECK(to_string(fit(targets({"sm_80", "compute_90"}), {}, Version{13, 0}, Version{13, 0})) ==
        "no visible GPU to check sm_80, compute_90 against");
  CHECK(to_string(fit({}, {}, Version{13, 0}, Version{13, 0})) == "no visible GPU to check no CUDA code against");
  CHECK(to_string(fit({}, {{9, 0}, {8, 0}}, Version{13, 0}, Version{13, 0})) ==
        "no device code in the binary to check");
  // A driver too old for the toolkit is said once, however many GPUs there are.
  CHECK(to_string(fit(targets({"sm_90"}), {{9, 0}, {8, 0}}, Version{11, 8}, Version{12, 0})) ==
        "built with CUDA 12.0; this driver supports CUDA 11.8 and runs CUDA 11.x builds at most (CUDA 12.x needs "
        "driver 525.60.13 or newer)");
  // No family minimum is known for CUDA 14.
  CHECK(to_string(fit(targets({"sm_90"}), {{9, 0}}, Version{13, 0}, Version{14, 0})) ==
        "built with CUDA 14.0; this driver supports CUDA 13.0 and runs CUDA 13.x builds at most");
}

TEST_CASE("a rejection lists each PTX limit once, and why same-major SASS does not run") {
  CHECK(to_string(fit(targets({"compute_100a", "compute_103f", "compute_100a"}), {{12, 0}}, Version{13, 0},
                      Version{13, 0})) ==
        "built for compute_100a, compute_103f; this GPU is sm_120 and no included PTX can be compiled for it "
        "(compute_100a runs only on sm_100, compute_103f needs sm_103 or a newer 10.x GPU)");
  CHECK(to_string(fit(targets({"sm_100a", "compute_120"}), {{10, 3}}, Version{13, 0}, Version{13, 0})) ==
        "built for sm_100a, compute_120; this GPU is sm_103 and no included PTX can be compiled for it (compute_120 "
        "needs sm_120 or newer); sm_100a runs only on sm_100");
  CHECK(to_string(fit(targets({"sm_80"}), {{8, 7}}, Version{13, 0}, Version{13, 0})) ==
        "built for sm_80; this GPU is sm_87 and no PTX is included; SASS is not shared between integrated (Tegra) "
        "and discrete GPUs");
}

TEST_CASE("PTX whose ISA is known names it") {
  auto ptx = CudaTarget::parse("compute_90").value();
  ptx.ptx_isa = Version{9, 0};
  CHECK(to_string(fit({ptx}, {{9, 0}, {12, 0}}, Version{12, 8}, Version{12, 8})) ==
        "GPU 0: built for compute_90; this GPU is sm_90 and only compute_90 (PTX ISA 9.0) fits it, which needs a "
        "driver for CUDA 13.0 or newer to JIT-compile; this driver supports CUDA 12.8; GPU 1: built for compute_90; "
        "this GPU is sm_120 and only compute_90 (PTX ISA 9.0) fits it, which needs a driver for CUDA 13.0 or newer to "
        "JIT-compile; this driver supports CUDA 12.8");
}

}  // namespace
}  // namespace kernelhub::resolver
