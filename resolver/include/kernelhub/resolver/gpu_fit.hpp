// GPU fit: will this CUDA binary run on these GPUs with this driver? Pure logic: the caller
// passes what the binary carries (CudaTarget, from the fatbinary or from metadata.json) and what
// the machine has (Environment::gpus, Environment::cuda_driver).
//
// Rules, for a GPU of compute capability M.m:
//   SASS   sm_Mk runs when k <= m (same major only: 8.0 → 8.6 yes, → 9.0 no). An `a` target
//          (sm_90a) runs only when k == m. An `f` target (sm_100f) follows the plain rule.
//          Integrated (Tegra) GPUs 5.3, 6.2, 7.2 and 8.7 share SASS with no other compute
//          capability (CUDA programming guide, binary compatibility).
//   PTX    compute_Xy is JIT-compiled by the driver for any GPU with X.y <= M.m; `a` PTX only
//          for exactly X.y, `f` PTX only within major X. The driver must know the PTX ISA:
//          the ISA version from the bytes maps to the first CUDA release that reads it
//          (min_cuda_for_ptx_isa); without it (metadata only) the variant's CUDA version stands in.
//   Driver The driver's CUDA major must be >= the variant's CUDA major. Minimum-driver rule:
//          CUDA minor-version compatibility lets a binary built with CUDA X.y run on any driver
//          of major X from the family's first release (11.x: 450.80.02, 12.x: 525.60.13,
//          13.x: 580); a driver that reports CUDA X.z (cuDriverGetVersion) is from such a
//          release, so "driver CUDA major >= toolkit major" is the whole check. The minor only
//          matters for PTX JIT (above).
// Preference: exact SASS > SASS of a lower minor (or family) > PTX JIT. With several visible
// GPUs the binary must run on every one (restrict with CUDA_VISIBLE_DEVICES or KERNELHUB_GPUS);
// the result is the worst GPU's.
//
// Unknowns never reject: no visible GPU, an unknown driver or toolkit version, or a binary with
// no device code (a host-only CUDA library) skip the checks that need them.
//
// Thread safety: pure functions over values.
#pragma once

#include <optional>
#include <vector>

#include "kernelhub/resolver/cuda_target.hpp"
#include "kernelhub/resolver/environment.hpp"
#include "kernelhub/resolver/version.hpp"

namespace kernelhub::resolver {

// How a binary fits, best first; everything from kPtxNeedsNewerDriver on does not run.
enum class GpuFitKind {
  kExactSass,       // SASS for exactly this compute capability
  kCompatibleSass,  // SASS of the same major and a lower minor, or an `f` family target
  kPtxJit,          // the driver JIT-compiles PTX (first load is slow; cached afterwards)
  kNotChecked,      // nothing to check against: no device code, or no visible GPU
  // Rejections, closest miss first.
  kPtxNeedsNewerDriver,  // only PTX fits this GPU, and the driver is too old to JIT it
  kNoCodeForGpu,         // neither SASS nor PTX for this GPU
  kDriverTooOld,         // the driver's CUDA major is below the variant's
};

inline bool runs(GpuFitKind kind) { return kind <= GpuFitKind::kNotChecked; }

struct GpuFitInput {
  std::vector<CudaTarget> code;         // what the binary carries (duplicates are fine)
  std::vector<ComputeCapability> gpus;  // every visible GPU
  std::optional<Version> driver;        // the CUDA version the driver supports (13.0)
  std::optional<Version> toolkit;       // the CUDA version the variant was built with (cu128 → 12.8)
  bool operator==(const GpuFitInput&) const = default;
};

// How the binary fits one GPU. Which fields are set depends on `kind`.
struct GpuFitOnGpu {
  ComputeCapability gpu;
  GpuFitKind kind = GpuFitKind::kNotChecked;
  std::optional<CudaTarget> used;  // the SASS or PTX that runs, when one does
  // kPtxNeedsNewerDriver: the PTX that would run, and the CUDA release whose driver JIT-compiles it.
  std::optional<CudaTarget> blocked_ptx;
  std::optional<Version> blocked_ptx_needs;
  // kNoCodeForGpu: the PTX that cannot be compiled for this GPU (one per name, in the binary's
  // order), and the first SASS of this major and a lower minor that still does not run here (an
  // `a` target, or SASS across integrated and discrete GPUs), when there is one.
  std::vector<CudaTarget> foreign_ptx;
  std::optional<CudaTarget> unusable_sass;
  bool operator==(const GpuFitOnGpu&) const = default;
};

// The fit as a value; resolver::to_string(const GpuFit&) (reason.hpp) says it in one line:
// "sm_90 SASS" or, for a rejection, e.g. "built for sm_80, sm_90; this GPU is sm_120 and no PTX
// is included". With several GPUs, each is named by its index.
struct GpuFit {
  GpuFitKind kind = GpuFitKind::kNotChecked;  // the worst over the GPUs
  std::vector<GpuFitOnGpu> gpus;              // one per visible GPU, in order
  GpuFitInput input;                          // what was checked

  bool runs() const { return resolver::runs(kind); }
  bool operator==(const GpuFit&) const = default;
};

GpuFit fit_gpus(const GpuFitInput& input);

// The first CUDA release whose driver JIT-compiles PTX of ISA version `isa` (8.8 → 12.9,
// 9.0 → 13.0), after cuda-python `get_minimal_required_cuda_ver_from_ptx_ver` (its table is
// NVIDIA's PTX release history). Versions newer than the table are assumed to follow 9.x
// (ISA X.y → CUDA X+4.y). None before PTX ISA 6.0 (CUDA 9.0).
std::optional<Version> min_cuda_for_ptx_isa(Version isa);

}  // namespace kernelhub::resolver
