// Gets the reference kernels' tvm-ffi variant from a Hub and checks rms_norm against a float64
// reference computed here, on tensors this program allocates: float32 and bfloat16, on the CPU or,
// for a CUDA variant, on the GPU (on a stream of its own). No LibTorch and no Python in the process.
//
//   HF_ENDPOINT=http://127.0.0.1:8080 tvm_ffi_rms_norm [ORG/NAME] [--bench N]
//
// --bench N: also times N calls of each (after warm-up; CUDA events on a GPU) and prints us/call.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernelhub/tvm_ffi.hpp"

#if defined(KERNELHUB_EXAMPLE_CUDA)
#include <cuda_runtime.h>
#endif

namespace {

// bfloat16 as the top half of a float32, rounded to nearest even.
std::uint16_t to_bf16(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return static_cast<std::uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
float from_bf16(std::uint16_t h) {
  const std::uint32_t u = static_cast<std::uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// A tensor's bytes on the host and, for a GPU run, on the device; a DLTensor over the latter.
struct Tensor {
  std::vector<std::int64_t> shape;
  DLDataType dtype;
  std::vector<std::uint8_t> host;
  void* device_data = nullptr;
  DLTensor dl{};

  Tensor(std::vector<std::int64_t> dims, DLDataType type, DLDevice device) : shape(std::move(dims)), dtype(type) {
    std::int64_t n = 1;
    for (std::int64_t d : shape) n *= d;
    host.resize(static_cast<std::size_t>(n) * type.bits / 8);
    dl.device = device;
    dl.ndim = static_cast<int>(shape.size());
    dl.dtype = type;
    dl.shape = shape.data();
    dl.strides = nullptr;  // compact, row-major
    dl.data = host.data();
#if defined(KERNELHUB_EXAMPLE_CUDA)
    if (device.device_type == kDLCUDA) {
      if (cudaMalloc(&device_data, host.size()) != cudaSuccess) throw std::runtime_error("cudaMalloc failed");
      dl.data = device_data;
    }
#endif
  }
  ~Tensor() {
#if defined(KERNELHUB_EXAMPLE_CUDA)
    if (device_data != nullptr) cudaFree(device_data);
#endif
  }
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;

  std::size_t size() const {
    return host.size() / (dtype.bits / 8);
  }
  float get(std::size_t i) const {
    if (dtype.bits == 16) return from_bf16(reinterpret_cast<const std::uint16_t*>(host.data())[i]);
    return reinterpret_cast<const float*>(host.data())[i];
  }
  void set(std::size_t i, float v) {
    if (dtype.bits == 16) {
      reinterpret_cast<std::uint16_t*>(host.data())[i] = to_bf16(v);
    } else {
      reinterpret_cast<float*>(host.data())[i] = v;
    }
  }
  void upload() {
#if defined(KERNELHUB_EXAMPLE_CUDA)
    if (device_data != nullptr) cudaMemcpy(device_data, host.data(), host.size(), cudaMemcpyHostToDevice);
#endif
  }
  void download() {
#if defined(KERNELHUB_EXAMPLE_CUDA)
    if (device_data != nullptr) cudaMemcpy(host.data(), device_data, host.size(), cudaMemcpyDeviceToHost);
#endif
  }
};

// LibTorch or Python mapped into this process, if any (there must be none).
std::vector<std::string> forbidden_mappings() {
  std::vector<std::string> found;
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    for (const char* name : {"libtorch", "libc10", "libpython"}) {
      if (line.find(name) != std::string::npos) found.push_back(line.substr(line.find('/')));
    }
  }
  return found;
}

}  // namespace

int main(int argc, char** argv) {
  std::string repo = "kernelhub/reference-kernels";
  int bench = 0;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--bench") == 0 && i + 1 < argc) {
      bench = std::atoi(argv[++i]);
    } else {
      repo = argv[i];
    }
  }
  try {
    const auto got_at = std::chrono::steady_clock::now();
    const auto kernel = kernelhub::tvm_ffi::get_kernel(repo, {.version = 1});
    const double get_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - got_at).count();
    std::printf("variant %s (TVM-FFI %s from %s)\n", kernel.variant().c_str(), kernel.runtime_version().c_str(),
                kernel.runtime_found_by().c_str());
    std::printf("get_kernel: %.1f ms (%d requests)\n", get_ms, kernel.timings().requests);
    const bool gpu = kernel.backend() == "cuda";
#if !defined(KERNELHUB_EXAMPLE_CUDA)
    if (gpu) {
      std::fprintf(stderr, "the chosen variant is a CUDA one, and this example was built without CUDA\n");
      return 1;
    }
#endif
    const DLDevice device{gpu ? kDLCUDA : kDLCPU, 0};
    void* stream = nullptr;
#if defined(KERNELHUB_EXAMPLE_CUDA)
    cudaStream_t cuda_stream = nullptr;
    if (gpu) cudaStreamCreateWithFlags(&cuda_stream, cudaStreamNonBlocking);
    stream = cuda_stream;
#endif
    const kernelhub::tvm_ffi::Function rms_norm = kernel.function("rms_norm");
    int failures = 0;
    struct Case {
      const char* name;
      DLDataType dtype;
      double tolerance;
    };
    for (const Case& c : {Case{"fp32", {kDLFloat, 32, 1}, 1e-5}, Case{"bf16", {kDLBfloat, 16, 1}, 1e-2}}) {
      const std::int64_t rows = 64, hidden = 4096;
      Tensor x({rows, hidden}, c.dtype, device), w({hidden}, c.dtype, device), out({rows, hidden}, c.dtype, device);
      std::mt19937 rng(1234);
      std::normal_distribution<float> normal;
      for (std::size_t i = 0; i < x.size(); ++i) x.set(i, normal(rng));
      for (std::size_t i = 0; i < w.size(); ++i) w.set(i, 1.0f + 0.1f * normal(rng));
      for (std::size_t i = 0; i < out.size(); ++i) out.set(i, NAN);  // poisoned: every element must be written
      x.upload();
      w.upload();
      out.upload();
      rms_norm.on_stream(stream, &out.dl, &x.dl, &w.dl, 1e-6);
#if defined(KERNELHUB_EXAMPLE_CUDA)
      if (gpu) cudaStreamSynchronize(cuda_stream);
#endif
      out.download();
      // The reference, in float64 from the same (rounded) inputs.
      double worst = 0;
      for (std::int64_t r = 0; r < rows; ++r) {
        double squares = 0;
        for (std::int64_t i = 0; i < hidden; ++i) squares += double(x.get(r * hidden + i)) * x.get(r * hidden + i);
        const double inv = 1.0 / std::sqrt(squares / hidden + 1e-6);
        for (std::int64_t i = 0; i < hidden; ++i) {
          const double expected = x.get(r * hidden + i) * inv * w.get(i);
          const double got = out.get(r * hidden + i);
          const double error = std::isnan(got) ? INFINITY : std::abs(got - expected) / (1 + std::abs(expected));
          worst = std::max(worst, error);
        }
      }
      const bool ok = worst < c.tolerance;
      failures += ok ? 0 : 1;
      std::printf("rms_norm %s [%lld, %lld] on %s: max error %.3g (tolerance %g) %s\n", c.name,
                  static_cast<long long>(rows), static_cast<long long>(hidden), gpu ? "cuda:0" : "cpu", worst,
                  c.tolerance, ok ? "ok" : "FAILED");
      if (bench > 0) {
        for (int i = 0; i < 10; ++i) rms_norm.on_stream(stream, &out.dl, &x.dl, &w.dl, 1e-6);
        double us = 0;
#if defined(KERNELHUB_EXAMPLE_CUDA)
        if (gpu) {
          cudaEvent_t start, stop;
          cudaEventCreate(&start);
          cudaEventCreate(&stop);
          cudaEventRecord(start, cuda_stream);
          for (int i = 0; i < bench; ++i) rms_norm.on_stream(stream, &out.dl, &x.dl, &w.dl, 1e-6);
          cudaEventRecord(stop, cuda_stream);
          cudaEventSynchronize(stop);
          float ms = 0;
          cudaEventElapsedTime(&ms, start, stop);
          us = 1e3 * ms / bench;
        }
#endif
        if (!gpu) {
          const auto t0 = std::chrono::steady_clock::now();
          for (int i = 0; i < bench; ++i) rms_norm.on_stream(stream, &out.dl, &x.dl, &w.dl, 1e-6);
          us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / bench;
        }
        std::printf("bench rms_norm %s [%lld, %lld]: %.2f us/call over %d calls\n", c.name,
                    static_cast<long long>(rows), static_cast<long long>(hidden), us, bench);
      }
    }
    // A wrong call is the kernel's own error, not a crash.
    Tensor small({2, 8}, {kDLFloat, 32, 1}, device), wrong({2, 8}, {kDLInt, 64, 1}, device);
    try {
      rms_norm(&wrong.dl, &small.dl, std::nullopt, 1e-6);
      std::printf("a wrong dtype was not refused\n");
      ++failures;
    } catch (const kernelhub::KernelRaisedError& e) {
      std::printf("wrong dtype refused by the kernel: %s: %s\n", e.kind().c_str(), e.kernel_message().c_str());
    }
    const auto mapped = forbidden_mappings();
    for (const auto& path : mapped) std::printf("mapped: %s\n", path.c_str());
    std::printf("LibTorch or Python mapped: %s\n", mapped.empty() ? "no" : "YES");
#if defined(KERNELHUB_EXAMPLE_CUDA)
    if (cuda_stream != nullptr) cudaStreamDestroy(cuda_stream);
#endif
    return failures == 0 && mapped.empty() ? 0 : 1;
  } catch (const kernelhub::KernelhubError& e) {
    std::fprintf(stderr, "tvm_ffi_rms_norm: %s\n", e.what());
    return 1;
  }
}
