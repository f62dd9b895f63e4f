// CudaTarget: one piece of device code a CUDA binary carries — SASS for a real GPU (`sm_90`,
// `sm_90a`, `sm_100f`) or PTX for a virtual one (`compute_90`) — as GPU fit sees it.
//
// The binary-format reader fills these from the fatbinary inside a `.so` (binary_format/fatbin.hpp); before download
// they come from `metadata.json` `backend.archs`, which kernel-builder writes in
// TORCH_CUDA_ARCH_LIST style: "8.0" (SASS), "9.0+PTX" (SASS and PTX), "9.0a", "10.0f".
//
// Suffixes (CUDA 12.0+ `a`, 12.9+ `f`): an `a` target uses arch-specific instructions and runs
// only on exactly that compute capability; an `f` target runs on the same major with an equal
// or higher minor. See gpu_fit.hpp for the rules.
//
// parse() and to_string() round-trip for the `sm_`/`compute_` spelling.
// Thread safety: a value type.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernelhub/base/result.hpp"
#include "kernelhub/resolver/environment.hpp"
#include "kernelhub/resolver/version.hpp"

namespace kernelhub::resolver {

enum class CudaCodeKind { kSass, kPtx };

enum class CudaArchSuffix {
  kNone,
  kArchSpecific,  // `a`: this compute capability only
  kFamily,        // `f`: same major, equal or higher minor
};

struct CudaTarget {
  CudaCodeKind kind = CudaCodeKind::kSass;
  ComputeCapability arch;  // sm_90 → 9.0, sm_103 → 10.3, sm_120 → 12.0
  CudaArchSuffix suffix = CudaArchSuffix::kNone;
  // PTX only, when read from the bytes: the PTX ISA version (`.version 9.0`), which decides
  // which drivers can JIT it. None from metadata (then the variant's CUDA version stands in).
  std::optional<Version> ptx_isa;

  // The SM number as nvcc and the fatbinary spell it: 9.0 → 90, 12.0 → 120.
  int sm() const { return arch.major * 10 + arch.minor; }
  // Builds a target from an SM number (90, 100, 120). REQUIRES: 10 <= sm.
  static CudaTarget from_sm(CudaCodeKind kind, int sm, CudaArchSuffix suffix = CudaArchSuffix::kNone);

  // Parses "sm_90", "sm_90a", "sm_100f" (SASS) or "compute_90", "compute_90a" (PTX).
  // Errors: kInvalidArgument naming the text and the expected form.
  static Result<CudaTarget> parse(std::string_view text);
  std::string to_string() const;  // "sm_90a", "compute_90"

  bool operator==(const CudaTarget&) const = default;
};

// Parses one `metadata.json` `backend.archs` entry: "8.0" → [sm_80]; "9.0+PTX" → [sm_90,
// compute_90]; "9.0a" → [sm_90a]; "10.0f+PTX" → [sm_100f, compute_100f]. The `sm_`/`compute_`
// spelling is accepted as well. Errors: kInvalidArgument naming the entry.
Result<std::vector<CudaTarget>> parse_cuda_arch(std::string_view entry);

// Parses every entry of `backend.archs`. Errors: the first entry that does not parse.
Result<std::vector<CudaTarget>> parse_cuda_archs(const std::vector<std::string>& entries);

}  // namespace kernelhub::resolver
