// CUDA driver and GPU detection through libcuda.so.1, opened with dlopen: kernelhub never links
// the CUDA driver, so it runs (and picks CPU variants) on machines without one.
//
// Fork note: cuDriverGetVersion needs no initialisation, but listing GPUs through the driver needs
// cuInit, and a process that called cuInit cannot use CUDA in a child it forks afterwards (the
// child must exec). So the GPUs are listed, in this order:
//   1. here, through the driver, where something in this process (torch) already initialised CUDA;
//   2. through NVML (libnvidia-ml.so.1, which creates no CUDA context and leaves fork() safe),
//      when it can tell which GPUs CUDA_VISIBLE_DEVICES leaves visible;
//   3. in a short-lived child process (fork, cuInit, query, report over a pipe, _exit), the state
//      PyTorch leaves a process in before its first CUDA call.
// Once per process: GPUs do not come and go under a running process. Steps 2 and 3 are asked once
// per boot: their answer is kept in kernelhub's state directory (gpu_memo.hpp) for the processes
// after. KERNELHUB_GPUS and KERNELHUB_CUDA_DRIVER skip the probe entirely.
//
// Thread safety: probe_cuda_once() may be called from any thread; the driver seam is read-only.
#pragma once

#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "kernelhub/resolver/environment.hpp"
#include "kernelhub/resolver/internal/gpu_memo.hpp"

namespace kernelhub::resolver {

struct CudaProbe {
  std::optional<Version> driver;        // none: no libcuda.so.1 or no driver
  std::vector<ComputeCapability> gpus;  // empty: no visible GPU
  bool forked = false;                  // the GPUs were listed in a child process
  bool from_nvml = false;               // the GPUs were listed through NVML
  bool remembered = false;              // the GPUs are what an earlier process of this boot listed
};

// How the probe reaches the driver: the seam tests replace.
struct CudaDriverAccess {
  // cuDriverGetVersion (no initialisation); none when there is no driver.
  std::function<std::optional<Version>()> driver_version;
  // The GPUs, listed in this process, only if it has already initialised CUDA (cuDeviceGetCount
  // answers without cuInit then); none when it has not, because asking would initialise it.
  std::function<std::optional<std::vector<ComputeCapability>>()> initialised_gpus;
  // The GPUs CUDA would see, through NVML; none when NVML is absent or cannot tell (a device
  // list it cannot map, MIG instances, GPUs of different kinds under a CUDA_VISIBLE_DEVICES list).
  std::function<std::optional<std::vector<ComputeCapability>>()> nvml_gpus;
  // The GPUs, listed in a forked child process.
  std::function<std::vector<ComputeCapability>()> gpus_in_child;

  // The driver of this machine; NVML's list is narrowed by `env`'s CUDA_VISIBLE_DEVICES, the
  // value this process's CUDA reads too.
  static CudaDriverAccess real(const EnvironmentSource& env);
};

// A GPU as NVML lists it.
struct NvmlGpu {
  ComputeCapability capability;
  std::string uuid;  // "GPU-8c3c..."
};

// Which of `all` (NVML's order) a CUDA_VISIBLE_DEVICES value (null: unset) leaves visible to CUDA,
// as CUDA reads it (indices or UUID prefixes, up to the first entry it cannot use); none when that
// cannot be told without CUDA's own enumeration (indices over GPUs of different kinds: CUDA numbers
// them fastest first; MIG instances).
std::optional<std::vector<ComputeCapability>> gpus_visible_to_cuda(const std::vector<NvmlGpu>& all,
                                                                   const char* cuda_visible_devices);

// One probe with `driver`: the version, then the GPUs in this process if CUDA is initialised
// here, else as `memo` kept them for this driver on this boot, else through NVML or in a child
// (that answer then kept in `memo`; a child's empty list is not, as a failed child gives one too).
CudaProbe probe_cuda(const CudaDriverAccess& driver, const GpuMemo& memo = GpuMemo());

// Answers the first probe's result to every later call (one probe, at most one child, per
// instance). The process has one, below; tests make their own.
class CudaProbeOnce {
 public:
  explicit CudaProbeOnce(CudaDriverAccess driver, GpuMemo memo = GpuMemo())
      : driver_(std::move(driver)), memo_(std::move(memo)) {}
  const CudaProbe& get();

 private:
  CudaDriverAccess driver_;
  GpuMemo memo_;
  std::once_flag once_;
  CudaProbe probe_;
};

// This process's probe, with the real driver, the state directory's memo and the configuration of
// the first call (GPUs and CUDA_VISIBLE_DEVICES do not change under a running process's CUDA).
const CudaProbe& probe_cuda_once(const EnvironmentSource& env);

}  // namespace kernelhub::resolver
