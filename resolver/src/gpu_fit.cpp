#include "kernelhub/resolver/gpu_fit.hpp"

#include <algorithm>
#include <tuple>

namespace kernelhub::resolver {

namespace {

std::string sm_name(ComputeCapability cc) { return "sm_" + std::to_string(cc.major * 10 + cc.minor); }

// Integrated (Tegra) GPUs: SASS is not shared between them and discrete GPUs, even within a
// major (variants-and-trust.md §2.2, "Jetson iGPU CCs are separate").
bool is_integrated(ComputeCapability cc) {
  return cc == ComputeCapability{5, 3} || cc == ComputeCapability{6, 2} || cc == ComputeCapability{7, 2} ||
         cc == ComputeCapability{8, 7};
}

bool sass_runs(const CudaTarget& t, ComputeCapability gpu) {
  if (t.arch.major != gpu.major) return false;
  if (t.suffix == CudaArchSuffix::kArchSpecific || is_integrated(t.arch) || is_integrated(gpu)) return t.arch == gpu;
  return t.arch.minor <= gpu.minor;
}

bool ptx_compiles_for(const CudaTarget& t, ComputeCapability gpu) {
  switch (t.suffix) {
    case CudaArchSuffix::kArchSpecific: return t.arch == gpu;
    case CudaArchSuffix::kFamily: return t.arch.major == gpu.major && t.arch.minor <= gpu.minor;
    case CudaArchSuffix::kNone: return t.arch <= gpu;
  }
  return false;
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

// What a PTX target needs from the driver: its ISA's first CUDA release, else the toolkit's.
std::optional<Version> ptx_needs(const CudaTarget& t, const std::optional<Version>& toolkit) {
  if (t.ptx_isa) {
    if (auto v = min_cuda_for_ptx_isa(*t.ptx_isa)) return v;
  }
  return toolkit;
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

GpuFitOnGpu fit_one(const std::vector<CudaTarget>& code, ComputeCapability gpu, const GpuFitInput& in) {
  GpuFitOnGpu out;
  out.gpu = gpu;

  // SASS: exact first, then the highest lower minor.
  const CudaTarget* best_sass = nullptr;
  for (const auto& t : code) {
    if (t.kind != CudaCodeKind::kSass || !sass_runs(t, gpu)) continue;
    if (best_sass == nullptr || t.arch > best_sass->arch) best_sass = &t;
  }
  if (best_sass != nullptr) {
    out.used = *best_sass;
    if (best_sass->arch == gpu) {
      out.kind = GpuFitKind::kExactSass;
      out.reason = best_sass->to_string() + " SASS";
    } else {
      out.kind = GpuFitKind::kCompatibleSass;
      out.reason = best_sass->to_string() + " SASS runs on " + sm_name(gpu);
    }
    return out;
  }

  // PTX: the newest arch the GPU can take whose ISA the driver reads.
  const CudaTarget* best_ptx = nullptr;
  const CudaTarget* blocked_ptx = nullptr;
  bool any_ptx = false;
  std::string limits;
  for (const auto& t : code) {
    if (t.kind != CudaCodeKind::kPtx) continue;
    any_ptx = true;
    if (!ptx_compiles_for(t, gpu)) {
      if (limits.find(t.to_string() + " ") == std::string::npos) limits += (limits.empty() ? "" : ", ") + ptx_limit(t);
      continue;
    }
    const auto need = ptx_needs(t, in.toolkit);
    if (in.driver && need && *in.driver < *need) {
      if (blocked_ptx == nullptr || t.arch > blocked_ptx->arch) blocked_ptx = &t;
      continue;
    }
    if (best_ptx == nullptr || t.arch > best_ptx->arch) best_ptx = &t;
  }
  if (best_ptx != nullptr) {
    out.used = *best_ptx;
    out.kind = GpuFitKind::kPtxJit;
    out.reason = "JIT from " + best_ptx->to_string() + " PTX for " + sm_name(gpu) + ", compiled at first load";
    if (!in.driver) out.reason += "; driver version unknown";
    return out;
  }

  const std::string built = "built for " + describe_targets(code) + "; this GPU is " + sm_name(gpu);
  if (blocked_ptx != nullptr) {
    const auto need = ptx_needs(*blocked_ptx, in.toolkit);
    out.kind = GpuFitKind::kPtxNeedsNewerDriver;
    out.reason = built + " and only " + describe_ptx_need(*blocked_ptx, in.toolkit) +
                 " fits it, which needs a driver for CUDA " + need->to_string() +
                 " or newer to JIT-compile; this driver supports CUDA " + in.driver->to_string();
    return out;
  }
  out.kind = GpuFitKind::kNoCodeForGpu;
  out.reason = built + (any_ptx ? " and no included PTX can be compiled for it (" + limits + ")" : " and no PTX is included");
  for (const auto& t : code) {
    if (t.kind == CudaCodeKind::kSass && t.arch.major == gpu.major && t.arch.minor <= gpu.minor) {
      if (t.suffix == CudaArchSuffix::kArchSpecific) {
        out.reason += "; " + t.to_string() + " runs only on " + sm_name(t.arch);
        break;
      }
      if (is_integrated(t.arch) != is_integrated(gpu)) {
        out.reason += "; SASS is not shared between integrated (Tegra) and discrete GPUs";
        break;
      }
    }
  }
  return out;
}

}  // namespace

std::optional<Version> min_cuda_for_ptx_isa(Version isa) {
  // PTX ISA → first CUDA release (cuda-python cuda/bindings/utils/_ptx_utils.py `_ptx_to_cuda`).
  static constexpr struct {
    Version isa;
    Version cuda;
  } kTable[] = {
      {{6, 0}, {9, 0}},   {{6, 1}, {9, 1}},   {{6, 2}, {9, 2}},   {{6, 3}, {10, 0}},  {{6, 4}, {10, 1}},
      {{6, 5}, {10, 2}},  {{7, 0}, {11, 0}},  {{7, 1}, {11, 1}},  {{7, 2}, {11, 2}},  {{7, 3}, {11, 3}},
      {{7, 4}, {11, 4}},  {{7, 5}, {11, 5}},  {{7, 6}, {11, 6}},  {{7, 7}, {11, 7}},  {{7, 8}, {11, 8}},
      {{8, 0}, {12, 0}},  {{8, 1}, {12, 1}},  {{8, 2}, {12, 2}},  {{8, 3}, {12, 3}},  {{8, 4}, {12, 4}},
      {{8, 5}, {12, 5}},  {{8, 6}, {12, 7}},  {{8, 7}, {12, 8}},  {{8, 8}, {12, 9}},  {{9, 0}, {13, 0}},
      {{9, 1}, {13, 1}},
  };
  for (const auto& row : kTable) {
    if (row.isa == isa) return row.cuda;
  }
  if (isa > kTable[std::size(kTable) - 1].isa) return Version{isa.major + 4, isa.minor};
  if (isa >= Version{6, 0}) {
    // A minor the table skips (e.g. 8.9): the next release that is listed.
    for (const auto& row : kTable) {
      if (row.isa > isa) return row.cuda;
    }
  }
  return std::nullopt;
}

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

GpuFit fit_gpus(const GpuFitInput& input) {
  GpuFit fit;
  if (input.driver && input.toolkit && input.driver->major < input.toolkit->major) {
    fit.kind = GpuFitKind::kDriverTooOld;
    fit.reason = "built with CUDA " + input.toolkit->to_string() + "; this driver supports CUDA " +
                 input.driver->to_string() + " and runs CUDA " + std::to_string(input.driver->major) +
                 ".x builds at most";
    if (const std::string min = family_minimum_driver(input.toolkit->major); !min.empty()) {
      fit.reason += " (CUDA " + std::to_string(input.toolkit->major) + ".x needs driver " + min + " or newer)";
    }
    for (const auto& gpu : input.gpus) fit.gpus.push_back({gpu, GpuFitKind::kDriverTooOld, std::nullopt, fit.reason});
    return fit;
  }
  if (input.gpus.empty()) {
    fit.reason = "no visible GPU to check " + describe_targets(input.code) + " against";
    return fit;
  }
  if (input.code.empty()) {
    fit.reason = "no device code in the binary to check";
    for (const auto& gpu : input.gpus) fit.gpus.push_back({gpu, GpuFitKind::kNotChecked, std::nullopt, fit.reason});
    return fit;
  }
  fit.kind = GpuFitKind::kExactSass;
  for (const auto& gpu : input.gpus) {
    fit.gpus.push_back(fit_one(input.code, gpu, input));
    fit.kind = std::max(fit.kind, fit.gpus.back().kind);
  }
  if (fit.gpus.size() == 1) {
    fit.reason = fit.gpus.front().reason;
    return fit;
  }
  // Several GPUs: a rejection names the GPUs it fails on; an accept lists how each runs.
  for (std::size_t i = 0; i < fit.gpus.size(); ++i) {
    const auto& g = fit.gpus[i];
    if (!fit.runs() && runs(g.kind)) continue;
    if (!fit.reason.empty()) fit.reason += "; ";
    fit.reason += "GPU " + std::to_string(i) + ": " + g.reason;
  }
  return fit;
}

}  // namespace kernelhub::resolver
