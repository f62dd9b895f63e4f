// The GPU-fit step: after select() has decided as the `kernels` package does, go where it does
// not — reject accepted CUDA variants whose device code cannot run on the visible GPUs with this
// driver, and prefer exact SASS over lower-minor SASS over PTX JIT (see gpu_fit.hpp).
//
// The caller says what each variant carries: before download from `metadata.json`
// `backend.archs` (parse_cuda_archs), after download from the fatbinary of its `.so`
// (binary_format::Fatbin, binary_format::targets_of) — after download, trust the bytes. A variant whose code
// is not known (none returned) is left as select() decided.
//
// Effect on the trace, for accepted CUDA variants with known code:
//   - one that does not run becomes rejected: reason::GpuMismatch with the fit;
//   - one that runs stays reason::Compatible and gains the fit: "compatible (sm_90 SASS)";
//   - accepted variants are stably re-ordered by fit (exact SASS, lower-minor SASS, PTX JIT,
//     not checked), so select()'s order holds within each; rejected ones follow in select()'s
//     order (those the fit rejected first, as they were accepted before).
// Nothing else changes, so an environment without GPUs gives select()'s trace (plus reasons).
//
// Thread safety: pure function over values; `code_of` is called once per accepted CUDA variant.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "kernelhub/resolver/cuda_target.hpp"
#include "kernelhub/resolver/environment.hpp"
#include "kernelhub/resolver/select.hpp"

namespace kernelhub::resolver {

using DeviceCodeLookup = std::function<std::optional<std::vector<CudaTarget>>(const Decision&)>;

void apply_gpu_fit(std::vector<Decision>& decisions, const Environment& env, const DeviceCodeLookup& code_of);

}  // namespace kernelhub::resolver
