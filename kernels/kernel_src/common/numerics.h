// Numerics shared by the CPU and CUDA kernels.
//
// acc_t is float for fp16/bf16/fp32 and double for fp64 (at::opmath_type). `round_to<T>` emulates
// one rounding of an eager PyTorch op in dtype T, so that a kernel can reproduce the exact
// sequence of roundings of the module it replaces (Qwen3RMSNorm, HF rotate_half RoPE, GEGLU).
#pragma once

#include <c10/macros/Macros.h>

#include <cmath>
#include <type_traits>

namespace kh {

// a * b rounded on its own: never contracted with a following add into an FMA, so that a kernel
// reproduces eager code that multiplies and adds in separate ops (nvcc contracts by default).
template <typename A>
C10_HOST_DEVICE inline A mul_rn(A a, A b) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<A, float>) {
    return __fmul_rn(a, b);
  } else {
    return __dmul_rn(a, b);
  }
#else
  return a * b;
#endif
}

template <typename T, typename A>
C10_HOST_DEVICE inline A round_to(A v) {
  return static_cast<A>(static_cast<T>(v));
}

// GELU with PyTorch's constants (aten/src/ATen/native/cuda/ActivationGeluKernel.cu), written without
// the cancellation of eager's 1 + erf(x) and 1 + tanh(u) for x << 0 (where eager loses every digit
// of a tiny result): 1 + erf(x / sqrt2) = erfc(-x / sqrt2), (1 + tanh(u)) / 2 = 1 / (2 + expm1(-2u)).
// Elsewhere the two forms agree to an fp32 ulp or two, below fp16/bf16 rounding. (expm1, not exp:
// glibc's exp carries a 2.29 symbol version, newer than manylinux_2_28 allows.)
template <typename A>
C10_HOST_DEVICE inline A gelu_tanh_math(A x) {
  constexpr A kBeta = A(M_SQRT2 * M_2_SQRTPI * 0.5);
  constexpr A kKappa = A(0.044715);
  const A inner = kBeta * (x + kKappa * x * x * x);
  return x / (A(2) + std::expm1(A(-2) * inner));
}

template <typename A>
C10_HOST_DEVICE inline A gelu_erf_math(A x) {
  return A(0.5) * x * std::erfc(-x * A(M_SQRT1_2));
}

template <typename A>
C10_HOST_DEVICE inline A gelu_math(A x, bool tanh_approx) {
  return tanh_approx ? gelu_tanh_math(x) : gelu_erf_math(x);
}

}  // namespace kh
