// CUDA driver and GPU detection through libcuda.so.1, opened with dlopen: kernelhub never links
// the CUDA driver, so it runs (and picks CPU variants) on machines without one.
//
// Fork note: cuDriverGetVersion needs no initialisation, but listing GPUs calls cuInit, and a
// process that called cuInit cannot use CUDA in a child it forks afterwards (the child must exec).
// probe_cuda() therefore runs the GPU query in a short-lived child process (fork, query, report
// over a pipe, _exit), so that the calling process never initialises CUDA itself; this is the
// same state PyTorch leaves a process in before its first CUDA call. Set KERNELHUB_GPUS to skip
// the probe entirely.
//
// Thread safety: safe to call from any thread; it touches no global state of this process except
// the dlopen'd handle, which it closes.
#pragma once

#include <optional>
#include <vector>

#include "kernelhub/resolver/environment.hpp"

namespace kernelhub::resolver {

struct CudaProbe {
  std::optional<Version> driver;         // none: no libcuda.so.1 or no driver
  std::vector<ComputeCapability> gpus;   // empty: no visible GPU
};

CudaProbe probe_cuda();

}  // namespace kernelhub::resolver
