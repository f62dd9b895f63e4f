// Two fp16/bf16 elements at a time in the GPU's packed instructions (HADD2/HMUL2), with results
// identical to eager PyTorch's: eager computes a + b or a * b of two fp16/bf16 tensors in fp32 and
// rounds once to the dtype. The fp32 result of one such add or multiply rounded to fp16/bf16 equals
// the exactly rounded result (fp32's 24 bits >= 2p + 2 for p = 11 and 8: double rounding is
// innocuous), which is what the packed _rn instructions compute (no FMA contraction). One packed
// instruction replaces two conversions, the fp32 op and a rounding per element: the row kernels'
// epilogues were instruction-bound at the H200's bandwidth (see bench/gpu/NOTES.md).
#pragma once

#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "cuda_common.cuh"

namespace kh::cuda {

template <typename T>
struct Packed2;

template <>
struct Packed2<c10::BFloat16> {
  using type = __nv_bfloat162;
  static __device__ __forceinline__ type round(float a, float b) { return __floats2bfloat162_rn(a, b); }
  static __device__ __forceinline__ float lo(type v) { return __low2float(v); }
  static __device__ __forceinline__ float hi(type v) { return __high2float(v); }
  static __device__ __forceinline__ type one() { return __float2bfloat162_rn(1.0f); }
};

template <>
struct Packed2<c10::Half> {
  using type = __half2;
  static __device__ __forceinline__ type round(float a, float b) { return __floats2half2_rn(a, b); }
  static __device__ __forceinline__ float lo(type v) { return __low2float(v); }
  static __device__ __forceinline__ float hi(type v) { return __high2float(v); }
  static __device__ __forceinline__ type one() { return __float2half2_rn(1.0f); }
};

template <typename T>
constexpr bool kPacked2 = std::is_same_v<T, c10::BFloat16> || std::is_same_v<T, c10::Half>;

// Element pair k (elements 2k, 2k + 1) of a 16-byte pack.
template <typename T>
__device__ __forceinline__ typename Packed2<T>::type& pair(Pack<T>& p, int k) {
  return reinterpret_cast<typename Packed2<T>::type*>(p.v)[k];
}

template <typename T>
__device__ __forceinline__ const typename Packed2<T>::type& pair(const Pack<T>& p, int k) {
  return reinterpret_cast<const typename Packed2<T>::type*>(p.v)[k];
}

}  // namespace kh::cuda
