#include "kernelhub/resolver/gpu_fit.hpp"

#include <algorithm>

namespace kernelhub::resolver {

namespace {

// Integrated (Tegra) GPUs: SASS is not shared between them and discrete GPUs, even within a
// major (CUDA programming guide, binary compatibility).
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

// What a PTX target needs from the driver: its ISA's first CUDA release, else the toolkit's.
std::optional<Version> ptx_needs(const CudaTarget& t, const std::optional<Version>& toolkit) {
  if (t.ptx_isa) {
    if (auto v = min_cuda_for_ptx_isa(*t.ptx_isa)) return v;
  }
  return toolkit;
}

// A GPU the binary's code was not compared with: the whole fit decided without it.
GpuFitOnGpu unchecked(ComputeCapability gpu, GpuFitKind kind) {
  GpuFitOnGpu out;
  out.gpu = gpu;
  out.kind = kind;
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
    out.kind = best_sass->arch == gpu ? GpuFitKind::kExactSass : GpuFitKind::kCompatibleSass;
    return out;
  }

  // PTX: the newest arch the GPU can take whose ISA the driver reads.
  const CudaTarget* best_ptx = nullptr;
  const CudaTarget* blocked_ptx = nullptr;
  for (const auto& t : code) {
    if (t.kind != CudaCodeKind::kPtx) continue;
    if (!ptx_compiles_for(t, gpu)) {
      const auto same_name = [&](const CudaTarget& f) { return f.arch == t.arch && f.suffix == t.suffix; };
      if (std::none_of(out.foreign_ptx.begin(), out.foreign_ptx.end(), same_name)) out.foreign_ptx.push_back(t);
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
    out.foreign_ptx.clear();
    return out;
  }
  if (blocked_ptx != nullptr) {
    out.kind = GpuFitKind::kPtxNeedsNewerDriver;
    out.blocked_ptx = *blocked_ptx;
    out.blocked_ptx_needs = ptx_needs(*blocked_ptx, in.toolkit);
    out.foreign_ptx.clear();
    return out;
  }
  out.kind = GpuFitKind::kNoCodeForGpu;
  for (const auto& t : code) {
    if (t.kind == CudaCodeKind::kSass && t.arch.major == gpu.major && t.arch.minor <= gpu.minor &&
        (t.suffix == CudaArchSuffix::kArchSpecific || is_integrated(t.arch) != is_integrated(gpu))) {
      out.unusable_sass = t;
      break;
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

GpuFit fit_gpus(const GpuFitInput& input) {
  GpuFit fit;
  fit.input = input;
  if (input.driver && input.toolkit && input.driver->major < input.toolkit->major) {
    fit.kind = GpuFitKind::kDriverTooOld;
    for (const auto& gpu : input.gpus) fit.gpus.push_back(unchecked(gpu, GpuFitKind::kDriverTooOld));
    return fit;
  }
  if (input.gpus.empty()) return fit;
  if (input.code.empty()) {
    for (const auto& gpu : input.gpus) fit.gpus.push_back(unchecked(gpu, GpuFitKind::kNotChecked));
    return fit;
  }
  fit.kind = GpuFitKind::kExactSass;
  for (const auto& gpu : input.gpus) {
    fit.gpus.push_back(fit_one(input.code, gpu, input));
    fit.kind = std::max(fit.kind, fit.gpus.back().kind);
  }
  return fit;
}

}  // namespace kernelhub::resolver
