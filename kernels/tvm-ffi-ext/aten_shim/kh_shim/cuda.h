// The CUDA part of the ATen shim (see tensor.h): the device guard, the current stream (TVM-FFI's,
// which the caller sets with TVMFFIEnvSetStream), the launch check, and the fast divider of
// PyTorch's IntegerDivider.cuh (a multiply and a shift for 32-bit dividends).
#pragma once

#include <cuda_runtime.h>
#include <tvm/ffi/extra/c_env_api.h>

#include <cstdint>
#include <type_traits>

#include "kh_shim/tensor.h"

namespace kh_shim {

[[noreturn]] void fail_cuda(cudaError_t error, const char* what);  // tensor_cuda.cu

}  // namespace kh_shim

#define C10_CUDA_CHECK(expr)                                                                    \
  do {                                                                                          \
    const cudaError_t kh_cuda_error = (expr);                                                   \
    if (C10_UNLIKELY(kh_cuda_error != cudaSuccess)) ::kh_shim::fail_cuda(kh_cuda_error, #expr); \
  } while (false)
#define C10_CUDA_KERNEL_LAUNCH_CHECK() C10_CUDA_CHECK(cudaGetLastError())

namespace c10::cuda {

// Makes `device` current for the scope and restores the previous one (c10::cuda::CUDAGuard).
class CUDAGuard {
 public:
  explicit CUDAGuard(const c10::Device& device) {
    C10_CUDA_CHECK(cudaGetDevice(&previous_));
    if (device.index() >= 0 && device.index() != previous_) C10_CUDA_CHECK(cudaSetDevice(device.index()));
  }
  ~CUDAGuard() { (void)cudaSetDevice(previous_); }
  CUDAGuard(const CUDAGuard&) = delete;
  CUDAGuard& operator=(const CUDAGuard&) = delete;

 private:
  int previous_ = 0;
};

struct CUDAStream {
  cudaStream_t stream_;
  cudaStream_t stream() const { return stream_; }
};

// The stream TVM-FFI holds for the device on this thread (nullptr: the default stream).
inline CUDAStream getCurrentCUDAStream(int device) {
  return CUDAStream{static_cast<cudaStream_t>(TVMFFIEnvGetStream(kDLCUDA, device < 0 ? 0 : device))};
}

}  // namespace c10::cuda

namespace at::cuda::detail {

template <typename Value>
struct DivMod {
  Value div, mod;
  C10_HOST_DEVICE DivMod(Value d, Value m) : div(d), mod(m) {}
};

// n / d and n % d for a divisor fixed at launch. For unsigned 32-bit values (dividends at most
// INT32_MAX) the quotient is mulhi(n, m) + n shifted right (Granlund and Montgomery); otherwise a
// plain division.
template <typename Value>
struct IntDivider {
  IntDivider() = default;
  IntDivider(Value d) : divisor(d) {}  // NOLINT
  C10_HOST_DEVICE Value div(Value n) const { return n / divisor; }
  C10_HOST_DEVICE Value mod(Value n) const { return n % divisor; }
  C10_HOST_DEVICE DivMod<Value> divmod(Value n) const { return DivMod<Value>(n / divisor, n % divisor); }
  Value divisor = 1;
};

template <>
struct IntDivider<unsigned int> {
  IntDivider() = default;
  IntDivider(unsigned int d) : divisor(d) {  // NOLINT
    for (shift = 0; shift < 32; ++shift) {
      if ((1U << shift) >= divisor) break;
    }
    const std::uint64_t one = 1;
    const std::uint64_t magic = ((one << 32) * ((one << shift) - divisor)) / divisor + 1;
    m1 = static_cast<unsigned int>(magic);
  }
  C10_HOST_DEVICE unsigned int div(unsigned int n) const {
#if defined(__CUDA_ARCH__)
    const unsigned int t = __umulhi(n, m1);
#else
    const unsigned int t = static_cast<unsigned int>((static_cast<std::uint64_t>(n) * m1) >> 32);
#endif
    return (t + n) >> shift;
  }
  C10_HOST_DEVICE unsigned int mod(unsigned int n) const {
    return n - div(n) * divisor;
  }
  C10_HOST_DEVICE DivMod<unsigned int> divmod(unsigned int n) const {
    const unsigned int q = div(n);
    return DivMod<unsigned int>(q, n - q * divisor);
  }
  unsigned int divisor = 1;
  unsigned int m1 = 1;
  unsigned int shift = 0;
};

}  // namespace at::cuda::detail
