#include "kernelhub/resolver/internal/cuda_probe.hpp"

#include <dlfcn.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace kernelhub::resolver {

namespace {

// The few Driver API entry points we use, with their documented C signatures.
using CuInit = int (*)(unsigned int);
using CuDriverGetVersion = int (*)(int*);
using CuDeviceGetCount = int (*)(int*);
using CuDeviceGet = int (*)(int*, int);
using CuDeviceGetAttribute = int (*)(int*, int, int);
constexpr int kAttrComputeCapabilityMajor = 75;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
constexpr int kAttrComputeCapabilityMinor = 76;
constexpr int kMaxGpus = 64;

struct DlCloser {
  void operator()(void* handle) const {
    if (handle != nullptr) dlclose(handle);
  }
};
using LibraryHandle = std::unique_ptr<void, DlCloser>;

template <typename Fn>
Fn symbol(void* handle, const char* name) {
  return reinterpret_cast<Fn>(dlsym(handle, name));
}

// Runs in the forked child: initialises CUDA there and writes pairs of (major, minor).
[[noreturn]] void child_query_gpus(int fd) {
  LibraryHandle lib(dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL));
  std::array<int, 1 + 2 * kMaxGpus> out{};
  if (lib) {
    auto init = symbol<CuInit>(lib.get(), "cuInit");
    auto count_fn = symbol<CuDeviceGetCount>(lib.get(), "cuDeviceGetCount");
    auto get = symbol<CuDeviceGet>(lib.get(), "cuDeviceGet");
    auto attr = symbol<CuDeviceGetAttribute>(lib.get(), "cuDeviceGetAttribute");
    int count = 0;
    if (init && count_fn && get && attr && init(0) == 0 && count_fn(&count) == 0) {
      count = std::min(count, kMaxGpus);
      int n = 0;
      for (int i = 0; i < count; ++i) {
        int dev = 0, major = 0, minor = 0;
        if (get(&dev, i) != 0 || attr(&major, kAttrComputeCapabilityMajor, dev) != 0 ||
            attr(&minor, kAttrComputeCapabilityMinor, dev) != 0) {
          continue;
        }
        out[1 + 2 * n] = major;
        out[2 + 2 * n] = minor;
        ++n;
      }
      out[0] = n;
    }
  }
  const ssize_t ignored = write(fd, out.data(), sizeof(out));
  (void)ignored;
  _exit(0);
}

std::vector<ComputeCapability> query_gpus_in_child() {
  int fds[2];
  if (pipe(fds) != 0) return {};
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return {};
  }
  if (pid == 0) {
    close(fds[0]);
    child_query_gpus(fds[1]);
  }
  close(fds[1]);
  std::array<int, 1 + 2 * kMaxGpus> in{};
  std::size_t got = 0;
  pollfd p{fds[0], POLLIN, 0};
  // A driver that hangs must not hang us: give the child 20 s, then kill it.
  while (got < sizeof(in) && poll(&p, 1, 20000) > 0) {
    const ssize_t n = read(fds[0], reinterpret_cast<char*>(in.data()) + got, sizeof(in) - got);
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  close(fds[0]);
  if (got < sizeof(in)) kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  std::vector<ComputeCapability> gpus;
  if (got == sizeof(in)) {
    for (int i = 0; i < std::min(in[0], kMaxGpus); ++i) gpus.push_back({in[1 + 2 * i], in[2 + 2 * i]});
  }
  return gpus;
}

// In this process, only where CUDA is already initialised here: cuDeviceGetCount answers
// CUDA_ERROR_NOT_INITIALIZED otherwise, and nothing here ever calls cuInit.
std::optional<std::vector<ComputeCapability>> initialised_gpus_here() {
  LibraryHandle lib(dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD));
  if (!lib) return std::nullopt;  // not even loaded: nothing initialised CUDA
  auto count_fn = symbol<CuDeviceGetCount>(lib.get(), "cuDeviceGetCount");
  auto get = symbol<CuDeviceGet>(lib.get(), "cuDeviceGet");
  auto attr = symbol<CuDeviceGetAttribute>(lib.get(), "cuDeviceGetAttribute");
  int count = 0;
  if (!count_fn || !get || !attr || count_fn(&count) != 0) return std::nullopt;
  std::vector<ComputeCapability> gpus;
  for (int i = 0; i < std::min(count, kMaxGpus); ++i) {
    int dev = 0, major = 0, minor = 0;
    if (get(&dev, i) != 0 || attr(&major, kAttrComputeCapabilityMajor, dev) != 0 ||
        attr(&minor, kAttrComputeCapabilityMinor, dev) != 0) {
      continue;
    }
    gpus.push_back({major, minor});
  }
  return gpus;
}

// NVML's few entry points (nvml.h; the _v2 names are the current ABI).
using NvmlInit = int (*)();
using NvmlShutdown = int (*)();
using NvmlDeviceGetCount = int (*)(unsigned int*);
using NvmlDeviceGetHandleByIndex = int (*)(unsigned int, void**);
using NvmlDeviceGetCudaComputeCapability = int (*)(void*, int*, int*);
using NvmlDeviceGetUuid = int (*)(void*, char*, unsigned int);

}  // namespace

std::optional<std::vector<ComputeCapability>> gpus_visible_to_cuda(const std::vector<NvmlGpu>& all,
                                                                   const char* visible) {
  std::vector<ComputeCapability> out;
  if (visible == nullptr) {
    for (const auto& g : all) out.push_back(g.capability);
    return out;
  }
  const bool uniform = std::all_of(all.begin(), all.end(), [&](const NvmlGpu& g) {
    return g.capability.major == all.front().capability.major && g.capability.minor == all.front().capability.minor;
  });
  std::string_view rest = visible;
  std::vector<bool> taken(all.size(), false);
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    if (item.starts_with("GPU-")) {
      const auto it = std::find_if(all.begin(), all.end(), [&](const NvmlGpu& g) { return g.uuid.starts_with(item); });
      if (it == all.end()) break;  // CUDA stops at the first entry it cannot use
      if (!taken[it - all.begin()]) out.push_back(it->capability);
      taken[it - all.begin()] = true;
    } else if (!item.empty() && std::all_of(item.begin(), item.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      // CUDA numbers devices fastest first, not in NVML's PCI order: only GPUs of one kind map.
      if (!uniform) return std::nullopt;
      const std::size_t index = std::stoul(std::string(item));
      if (index >= all.size()) break;
      if (!taken[index]) out.push_back(all[index].capability);
      taken[index] = true;
    } else {
      if (item.starts_with("MIG-")) return std::nullopt;
      break;  // anything else ends the list for CUDA too ("", "-1", "NoDevFiles")
    }
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return out;
}

namespace {

std::optional<std::vector<ComputeCapability>> gpus_through_nvml(
    const std::optional<std::string>& cuda_visible_devices) {
  LibraryHandle lib(dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL));
  if (!lib) return std::nullopt;
  auto init = symbol<NvmlInit>(lib.get(), "nvmlInit_v2");
  auto shutdown = symbol<NvmlShutdown>(lib.get(), "nvmlShutdown");
  auto count_fn = symbol<NvmlDeviceGetCount>(lib.get(), "nvmlDeviceGetCount_v2");
  auto handle_fn = symbol<NvmlDeviceGetHandleByIndex>(lib.get(), "nvmlDeviceGetHandleByIndex_v2");
  auto capability_fn = symbol<NvmlDeviceGetCudaComputeCapability>(lib.get(), "nvmlDeviceGetCudaComputeCapability");
  auto uuid_fn = symbol<NvmlDeviceGetUuid>(lib.get(), "nvmlDeviceGetUUID");
  if (!init || !shutdown || !count_fn || !handle_fn || !capability_fn || !uuid_fn || init() != 0) return std::nullopt;
  std::vector<NvmlGpu> all;
  unsigned int count = 0;
  bool ok = count_fn(&count) == 0;
  for (unsigned int i = 0; ok && i < std::min<unsigned int>(count, kMaxGpus); ++i) {
    void* device = nullptr;
    NvmlGpu gpu;
    char uuid[96] = {};
    ok = handle_fn(i, &device) == 0 && capability_fn(device, &gpu.capability.major, &gpu.capability.minor) == 0 &&
         uuid_fn(device, uuid, sizeof(uuid)) == 0;
    gpu.uuid = uuid;
    all.push_back(std::move(gpu));
  }
  shutdown();
  if (!ok) return std::nullopt;
  return gpus_visible_to_cuda(all, cuda_visible_devices ? cuda_visible_devices->c_str() : nullptr);
}

std::optional<Version> driver_version_here() {
  LibraryHandle lib(dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL));
  if (!lib) return std::nullopt;  // no driver installed: not an error
  auto get_version = symbol<CuDriverGetVersion>(lib.get(), "cuDriverGetVersion");
  int version = 0;
  if (get_version == nullptr || get_version(&version) != 0 || version <= 0) return std::nullopt;
  return Version{version / 1000, (version % 1000) / 10};
}

}  // namespace

CudaDriverAccess CudaDriverAccess::real(const EnvironmentSource& env) {
  return CudaDriverAccess{&driver_version_here, &initialised_gpus_here,
                          [visible = env(env_vars::kCudaVisibleDevices)] { return gpus_through_nvml(visible); },
                          &query_gpus_in_child};
}

CudaProbe probe_cuda(const CudaDriverAccess& driver, const GpuMemo& memo) {
  CudaProbe probe;
  probe.driver = driver.driver_version();
  if (!probe.driver) return probe;
  if (auto gpus = driver.initialised_gpus()) {
    probe.gpus = std::move(*gpus);
    return probe;
  }
  const std::optional<std::string> key = memo.key_for(*probe.driver);
  if (auto gpus = key ? memo.recall(*key) : std::nullopt) {
    probe.gpus = std::move(*gpus);
    probe.remembered = true;
    return probe;
  }
  if (auto gpus = driver.nvml_gpus ? driver.nvml_gpus() : std::nullopt) {
    probe.gpus = std::move(*gpus);
    probe.from_nvml = true;
  } else {
    probe.gpus = driver.gpus_in_child();
    probe.forked = true;
  }
  if (key && (probe.from_nvml || !probe.gpus.empty())) memo.keep(*key, probe.gpus);
  return probe;
}

const CudaProbe& CudaProbeOnce::get() {
  std::call_once(once_, [this] { probe_ = probe_cuda(driver_, memo_); });
  return probe_;
}

const CudaProbe& probe_cuda_once(const EnvironmentSource& env) {
  static CudaProbeOnce once(CudaDriverAccess::real(env), GpuMemo::for_process(env));
  return once.get();
}

}  // namespace kernelhub::resolver
