#include "kernelhub/resolver/cuda_probe.hpp"

#include <dlfcn.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <memory>
#include <mutex>

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

std::optional<Version> driver_version_here() {
  LibraryHandle lib(dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL));
  if (!lib) return std::nullopt;  // no driver installed: not an error
  auto get_version = symbol<CuDriverGetVersion>(lib.get(), "cuDriverGetVersion");
  int version = 0;
  if (get_version == nullptr || get_version(&version) != 0 || version <= 0) return std::nullopt;
  return Version{version / 1000, (version % 1000) / 10};
}

}  // namespace

CudaDriverAccess CudaDriverAccess::real() {
  return CudaDriverAccess{&driver_version_here, &initialised_gpus_here, &query_gpus_in_child};
}

CudaProbe probe_cuda(const CudaDriverAccess& driver) {
  CudaProbe probe;
  probe.driver = driver.driver_version();
  if (!probe.driver) return probe;
  if (auto gpus = driver.initialised_gpus()) {
    probe.gpus = std::move(*gpus);
    return probe;
  }
  probe.gpus = driver.gpus_in_child();
  probe.forked = true;
  return probe;
}

const CudaProbe& CudaProbeOnce::get() {
  std::call_once(once_, [this] { probe_ = probe_cuda(driver_); });
  return probe_;
}

const CudaProbe& probe_cuda_once() {
  static CudaProbeOnce once(CudaDriverAccess::real());
  return once.get();
}

}  // namespace kernelhub::resolver
