// The output step that RMSNorm and fused add + RMSNorm share: a row's values normalised by their
// inverse RMS with Qwen3RMSNorm's rounding (normalise in fp32, round to the dtype, then multiply
// by the weight), a pack at a time.
#pragma once

#include "cuda_common.cuh"
#include "numerics.h"
#include "packed_math.cuh"

namespace kh::cuda {

template <typename T, typename A>
__device__ __forceinline__ T rms_normed(T v, A inv, const T* w) {
  const A normed = kh::round_to<T>(static_cast<A>(v) * inv);
  return static_cast<T>(w ? normed * static_cast<A>(*w) : normed);
}

// A pack of rms_normed values (w: the weight's pack, or null), two at a time in packed instructions
// for fp16/bf16 (packed_math.cuh).
template <typename T, typename A>
__device__ __forceinline__ Pack<T> normed_pack(const Pack<T>& x, A inv, const Pack<T>* w) {
  Pack<T> o;
  if constexpr (kPacked2<T>) {
    using P2 = Packed2<T>;
#pragma unroll
    for (int j = 0; j < Pack<T>::N / 2; ++j) {
      typename P2::type n = P2::round(P2::lo(pair(x, j)) * inv, P2::hi(pair(x, j)) * inv);
      pair(o, j) = w ? __hmul2_rn(n, pair(*w, j)) : n;
    }
  } else {
#pragma unroll
    for (int j = 0; j < Pack<T>::N; ++j) o.v[j] = rms_normed(x.v[j], inv, w ? &w->v[j] : nullptr);
  }
  return o;
}

// normed_pack stored at y.
template <typename T, typename A>
__device__ __forceinline__ void store_normed(T* y, const Pack<T>& x, A inv, const Pack<T>* w) {
  store_pack(y, normed_pack(x, inv, w));
}

}  // namespace kh::cuda
