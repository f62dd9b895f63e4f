#include "kernelhub/resolver/reason.hpp"

#include <algorithm>
#include <cassert>
#include <tuple>
#include <vector>

#include "overloaded.hpp"

namespace kernelhub::resolver {

namespace {

// Versions and ABI flags as the `kernels` package prints them in its reasons (str(None) = "None").
std::string opt_version(const std::optional<Version>& v) {
  return v ? v->to_string() : "None";
}
std::string opt_bool(const std::optional<bool>& b) {
  return b ? (*b ? "True" : "False") : "None";
}

std::string kind_name(BackendKind kind) {
  return std::string(Backend{kind, {}}.kind_name());
}

std::string sm_name(ComputeCapability cc) {
  return "sm_" + std::to_string(cc.major * 10 + cc.minor);
}

// "sm_80, sm_90, compute_90": distinct targets, SASS before PTX, each by SM number.
std::string describe_targets(const std::vector<CudaTarget>& code) {
  std::vector<CudaTarget> sorted = code;
  const auto key = [](const CudaTarget& t) {
    return std::tuple(t.kind == CudaCodeKind::kPtx, t.sm(), static_cast<int>(t.suffix));
  };
  std::sort(sorted.begin(), sorted.end(), [&](const auto& a, const auto& b) { return key(a) < key(b); });
  std::string out;
  std::string last;
  for (const auto& t : sorted) {
    std::string name = t.to_string();
    if (name == last) continue;
    out += (out.empty() ? "" : ", ") + name;
    last = std::move(name);
  }
  return out.empty() ? "no CUDA code" : out;
}

// Why a PTX target does not fit a GPU, e.g. "compute_90 needs sm_90 or newer".
std::string ptx_limit(const CudaTarget& t) {
  switch (t.suffix) {
    case CudaArchSuffix::kArchSpecific: return t.to_string() + " runs only on " + sm_name(t.arch);
    case CudaArchSuffix::kFamily:
      return t.to_string() + " needs " + sm_name(t.arch) + " or a newer " + std::to_string(t.arch.major) + ".x GPU";
    case CudaArchSuffix::kNone: break;
  }
  return t.to_string() + " needs " + sm_name(t.arch) + " or newer";
}

// The first driver release of a CUDA major (minor-version compatibility's family minimum).
std::string family_minimum_driver(int cuda_major) {
  switch (cuda_major) {
    case 11: return "450.80.02";
    case 12: return "525.60.13";
    case 13: return "580";
    default: return {};
  }
}

std::string describe_ptx_need(const CudaTarget& t, const std::optional<Version>& toolkit) {
  std::string out = t.to_string();
  if (t.ptx_isa) {
    out += " (PTX ISA " + t.ptx_isa->to_string() + ")";
  } else if (toolkit) {
    out += " (built with CUDA " + toolkit->to_string() + ")";
  }
  return out;
}

// REQUIRES: in.driver and in.toolkit (a driver-too-old fit compared them).
std::string driver_too_old(const GpuFitInput& in) {
  std::string out = "built with CUDA " + in.toolkit->to_string() + "; this driver supports CUDA " +
                    in.driver->to_string() + " and runs CUDA " + std::to_string(in.driver->major) + ".x builds at most";
  if (const std::string min = family_minimum_driver(in.toolkit->major); !min.empty()) {
    out += " (CUDA " + std::to_string(in.toolkit->major) + ".x needs driver " + min + " or newer)";
  }
  return out;
}

std::string on_gpu(const GpuFitOnGpu& g, const GpuFitInput& in) {
  const auto built = [&] { return "built for " + describe_targets(in.code) + "; this GPU is " + sm_name(g.gpu); };
  switch (g.kind) {
    case GpuFitKind::kExactSass: return g.used->to_string() + " SASS";
    case GpuFitKind::kCompatibleSass: return g.used->to_string() + " SASS runs on " + sm_name(g.gpu);
    case GpuFitKind::kPtxJit:
      return "JIT from " + g.used->to_string() + " PTX for " + sm_name(g.gpu) + ", compiled at first load" +
             (in.driver ? "" : "; driver version unknown");
    case GpuFitKind::kNotChecked: return "no device code in the binary to check";
    case GpuFitKind::kPtxNeedsNewerDriver:
      return built() + " and only " + describe_ptx_need(*g.blocked_ptx, in.toolkit) +
             " fits it, which needs a driver for CUDA " + g.blocked_ptx_needs->to_string() +
             " or newer to JIT-compile; this driver supports CUDA " + in.driver->to_string();
    case GpuFitKind::kNoCodeForGpu: {
      std::string out = built();
      if (g.foreign_ptx.empty()) {
        out += " and no PTX is included";
      } else {
        std::string limits;
        for (const auto& t : g.foreign_ptx) limits += (limits.empty() ? "" : ", ") + ptx_limit(t);
        out += " and no included PTX can be compiled for it (" + limits + ")";
      }
      if (g.unusable_sass) {
        // Same major, lower minor, and still not runnable: an `a` target, or across integrated
        // and discrete GPUs (gpu_fit.hpp).
        out += g.unusable_sass->suffix == CudaArchSuffix::kArchSpecific
                   ? "; " + g.unusable_sass->to_string() + " runs only on " + sm_name(g.unusable_sass->arch)
                   : "; SASS is not shared between integrated (Tegra) and discrete GPUs";
      }
      return out;
    }
    case GpuFitKind::kDriverTooOld: return driver_too_old(in);
  }
  return {};
}

}  // namespace

ReasonCode reason_code(const Reason& r) {
  return std::visit(Overloaded{
                        [](const reason::UnparsableName&) { return ReasonCode::kUnparsableName; },
                        [](const reason::FreeThreadedPython&) { return ReasonCode::kFreeThreadedPython; },
                        [](const reason::PythonTooOld&) { return ReasonCode::kPythonTooOld; },
                        [](const reason::CpuMismatch&) { return ReasonCode::kCpu; },
                        [](const reason::OsMismatch&) { return ReasonCode::kOs; },
                        [](const reason::TorchVersion&) { return ReasonCode::kTorchVersion; },
                        [](const reason::CxxAbi&) { return ReasonCode::kCxxAbi; },
                        [](const reason::StableAbiTooNew&) { return ReasonCode::kStableAbiTooNew; },
                        [](const reason::NoLibTorch&) { return ReasonCode::kNoLibTorch; },
                        [](const reason::TvmFfiNotLoadable&) { return ReasonCode::kTvmFfiNotLoadable; },
                        [](const reason::TvmFfiVersion&) { return ReasonCode::kTvmFfiVersion; },
                        [](const reason::CudaVersion&) { return ReasonCode::kCudaVersion; },
                        [](const reason::RocmVersion&) { return ReasonCode::kRocmVersion; },
                        [](const reason::BackendMismatch&) { return ReasonCode::kBackend; },
                        [](const reason::MetalMacos&) { return ReasonCode::kMetalMacos; },
                        [](const reason::PurePython&) { return ReasonCode::kPurePython; },
                        [](const reason::NoarchBackend&) { return ReasonCode::kNoarchBackend; },
                        [](const reason::MlxMissing&) { return ReasonCode::kMlxMissing; },
                        [](const reason::SdkNotLoadable&) { return ReasonCode::kSdkNotLoadable; },
                        [](const reason::GpuMismatch& m) {
                          assert(!m.fit.runs());
                          switch (m.fit.kind) {
                            case GpuFitKind::kDriverTooOld: return ReasonCode::kDriverTooOld;
                            case GpuFitKind::kPtxNeedsNewerDriver: return ReasonCode::kPtxNeedsNewerDriver;
                            default: return ReasonCode::kNoCodeForGpu;
                          }
                        },
                        [](const reason::Compatible&) { return ReasonCode::kCompatible; },
                    },
                    r);
}

std::string_view code_name(ReasonCode code) {
  switch (code) {
    case ReasonCode::kCompatible: return "compatible";
    case ReasonCode::kUnparsableName: return "unparsable_name";
    case ReasonCode::kFreeThreadedPython: return "free_threaded_python";
    case ReasonCode::kPythonTooOld: return "python_too_old";
    case ReasonCode::kCpu: return "cpu";
    case ReasonCode::kOs: return "os";
    case ReasonCode::kTorchVersion: return "torch_version";
    case ReasonCode::kCxxAbi: return "cxx_abi";
    case ReasonCode::kStableAbiTooNew: return "stable_abi_too_new";
    case ReasonCode::kNoLibTorch: return "no_libtorch";
    case ReasonCode::kTvmFfiNotLoadable: return "tvm_ffi_not_loadable";
    case ReasonCode::kTvmFfiVersion: return "tvm_ffi_version";
    case ReasonCode::kCudaVersion: return "cuda_version";
    case ReasonCode::kRocmVersion: return "rocm_version";
    case ReasonCode::kBackend: return "backend";
    case ReasonCode::kMetalMacos: return "metal_macos";
    case ReasonCode::kPurePython: return "pure_python";
    case ReasonCode::kNoarchBackend: return "noarch_backend";
    case ReasonCode::kMlxMissing: return "mlx_missing";
    case ReasonCode::kSdkNotLoadable: return "sdk_not_loadable";
    case ReasonCode::kDriverTooOld: return "driver_too_old";
    case ReasonCode::kPtxNeedsNewerDriver: return "ptx_needs_newer_driver";
    case ReasonCode::kNoCodeForGpu: return "no_code_for_gpu";
  }
  return "unknown";
}

std::string to_string(const Reason& r) {
  return std::visit(
      Overloaded{
          [](const reason::UnparsableName& u) { return u.message; },
          [](const reason::FreeThreadedPython&) {
            return std::string("abi3 is not supported on free-threaded Python, abi3t is required");
          },
          [](const reason::PythonTooOld& m) {
            return "Python " + m.variant.to_string() + " or later is required, system Python version is " +
                   m.system.to_string();
          },
          [](const reason::CpuMismatch& m) {
            return "CPU (" + m.variant + ") does not match system CPU (" + m.system + ")";
          },
          [](const reason::OsMismatch& m) {
            return "OS (" + m.variant + ") does not match system OS (" + m.system + ")";
          },
          [](const reason::TorchVersion& m) {
            return "Torch version (" + m.variant.to_string() + ") does not match environment Torch version (" +
                   opt_version(m.system) + ")";
          },
          [](const reason::CxxAbi& m) {
            return "Torch CXX11 ABI (" + opt_bool(m.variant) + ") does not match environment Torch CXX11 ABI (" +
                   opt_bool(m.system) + ")";
          },
          [](const reason::StableAbiTooNew& m) {
            return "Torch stable ABI version (" + m.variant.to_string() +
                   ") is too new for environment Torch version (" + opt_version(m.system) + ")";
          },
          [](const reason::NoLibTorch&) {
            return std::string("needs LibTorch, which this process does not have; only tvm-ffi variants load here");
          },
          [](const reason::TvmFfiNotLoadable&) {
            return std::string("tvm-ffi variant; this process has no TVM-FFI loader");
          },
          [](const reason::TvmFfiVersion& m) {
            return "tvm-ffi version (" + m.variant.to_string() + ") does not match environment tvm-ffi version (" +
                   opt_version(m.system) + ")";
          },
          [](const reason::CudaVersion& m) {
            return "CUDA version (" + opt_version(m.variant) + ") is not compatible with system CUDA version (" +
                   opt_version(m.system) + ")";
          },
          [](const reason::RocmVersion& m) {
            return "ROCm version (" + opt_version(m.variant) + ") is not compatible with system ROCm version (" +
                   (m.system_text.empty() ? opt_version(m.system) : m.system_text) + ")";
          },
          [](const reason::BackendMismatch& m) {
            const std::string variant = m.form == NameForm::kLegacy ? m.variant.to_token() : m.variant.to_explicit();
            return "backend (" + variant + ") does not match selected backend (" + m.system.to_token() + ")";
          },
          [](const reason::PurePython&) {
            return std::string("pure-Python variant; only a Python process can load it");
          },
          [](const reason::MetalMacos& m) {
            return "Metal kernels require macOS 26.0 or later, system macOS version is " + opt_version(m.system);
          },
          [](const reason::NoarchBackend& m) {
            return "backend (" + m.variant + ") does not match system backend (" + kind_name(m.system) + ")" +
                   (m.sdk ? "" : " and is not universal");
          },
          [](const reason::MlxMissing&) { return std::string("MLX is not installed in the environment"); },
          [](const reason::SdkNotLoadable&) {
            return std::string("sdk variant: build-time files for a Python build, not a loadable kernel");
          },
          [](const reason::GpuMismatch& m) { return to_string(m.fit); },
          [](const reason::Compatible& c) {
            if (c.fit) return "compatible (" + to_string(*c.fit) + ")";
            if (!c.fit_not_checked.empty()) return "compatible (GPU fit not checked: " + c.fit_not_checked + ")";
            return std::string("compatible");
          },
      },
      r);
}

std::string to_string(const GpuFit& fit) {
  const GpuFitInput& in = fit.input;
  if (fit.kind == GpuFitKind::kDriverTooOld) return driver_too_old(in);
  if (in.gpus.empty()) return "no visible GPU to check " + describe_targets(in.code) + " against";
  if (in.code.empty()) return "no device code in the binary to check";
  if (fit.gpus.size() == 1) return on_gpu(fit.gpus.front(), in);
  // Several GPUs: a rejection names the GPUs it fails on; an accept lists how each runs.
  std::string out;
  for (std::size_t i = 0; i < fit.gpus.size(); ++i) {
    const auto& g = fit.gpus[i];
    if (!fit.runs() && runs(g.kind)) continue;
    if (!out.empty()) out += "; ";
    out += "GPU " + std::to_string(i) + ": " + on_gpu(g, in);
  }
  return out;
}

}  // namespace kernelhub::resolver
