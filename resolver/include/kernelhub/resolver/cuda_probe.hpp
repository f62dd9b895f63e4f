// CUDA driver and GPU detection through libcuda.so.1, opened with dlopen: kernelhub never links
// the CUDA driver, so it runs (and picks CPU variants) on machines without one.
//
// Fork note: cuDriverGetVersion needs no initialisation, but listing GPUs needs cuInit, and a
// process that called cuInit cannot use CUDA in a child it forks afterwards (the child must exec).
// So where this process has not initialised CUDA, the GPUs are listed in a short-lived child
// process (fork, query, report over a pipe, _exit), the state PyTorch leaves a process in before
// its first CUDA call. Where something in this process (torch) has already initialised CUDA, the
// GPUs are listed here, with no child. Either way once per process: GPUs do not come and go under
// a running process. KERNELHUB_GPUS and KERNELHUB_CUDA_DRIVER skip the probe entirely.
//
// Thread safety: probe_cuda_once() may be called from any thread; the driver seam is read-only.
#pragma once

#include <functional>
#include <mutex>
#include <optional>
#include <vector>

#include "kernelhub/resolver/environment.hpp"

namespace kernelhub::resolver {

struct CudaProbe {
  std::optional<Version> driver;        // none: no libcuda.so.1 or no driver
  std::vector<ComputeCapability> gpus;  // empty: no visible GPU
  bool forked = false;                  // the GPUs were listed in a child process
};

// How the probe reaches the driver: the seam tests replace.
struct CudaDriverAccess {
  // cuDriverGetVersion (no initialisation); none when there is no driver.
  std::function<std::optional<Version>()> driver_version;
  // The GPUs, listed in this process, only if it has already initialised CUDA (cuDeviceGetCount
  // answers without cuInit then); none when it has not, because asking would initialise it.
  std::function<std::optional<std::vector<ComputeCapability>>()> initialised_gpus;
  // The GPUs, listed in a forked child process.
  std::function<std::vector<ComputeCapability>()> gpus_in_child;

  static CudaDriverAccess real();
};

// One probe with `driver`: the version, then the GPUs in this process if CUDA is initialised
// here, else in a child.
CudaProbe probe_cuda(const CudaDriverAccess& driver);

// Answers the first probe's result to every later call (one probe, at most one child, per
// instance). The process has one, below; tests make their own.
class CudaProbeOnce {
 public:
  explicit CudaProbeOnce(CudaDriverAccess driver) : driver_(std::move(driver)) {}
  const CudaProbe& get();

 private:
  CudaDriverAccess driver_;
  std::once_flag once_;
  CudaProbe probe_;
};

// This process's probe, with the real driver.
const CudaProbe& probe_cuda_once();

}  // namespace kernelhub::resolver
