// GELU on the GPU for fp16/bf16 results: the tanh form from fast fp32 intrinsics. The accurate
// expm1/erfc form (numerics.h) costs more instructions than a 16-byte pack's memory time allows at
// the H200's bandwidth; x / (1 + e^(-2u)) (= x * (1 + tanh(u)) / 2, no cancellation for x << 0)
// with __expf and __fdividef is within about 1e-6 relative of it, far under an fp16 (4.9e-4) or bf16
// (3.9e-3) rounding step. fp32 and fp64 results keep the accurate math.
#pragma once

#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include <type_traits>

#include "numerics.h"

namespace kh::cuda {

template <typename T>
constexpr bool kLowPrecision = std::is_same_v<T, c10::Half> || std::is_same_v<T, c10::BFloat16>;

template <typename T, typename A>
__device__ __forceinline__ A gelu_for(A x, bool tanh_approx) {
  if constexpr (kLowPrecision<T> && std::is_same_v<A, float>) {
    if (tanh_approx) {
      constexpr float kBeta = float(M_SQRT2 * M_2_SQRTPI * 0.5);
      constexpr float kKappa = 0.044715f;
      const float inner = kBeta * (x + kKappa * x * x * x);
      return __fdividef(x, 1.0f + __expf(-2.0f * inner));
    }
  }
  return kh::gelu_math(x, tanh_approx);
}

}  // namespace kh::cuda
