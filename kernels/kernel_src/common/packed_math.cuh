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
  // A bf16 is the top half of its fp32: integer ops on the 32-bit pair, never a 16-bit register (with
  // __low2float/__high2float each pack was split into a register per element right after its load).
  static __device__ __forceinline__ float lo(type v) { return __uint_as_float(bits(v) << 16); }
  static __device__ __forceinline__ float hi(type v) { return __uint_as_float(bits(v) & 0xffff0000u); }
  static __device__ __forceinline__ type one() { return __float2bfloat162_rn(1.0f); }
  static __device__ __forceinline__ unsigned bits(type v) { return *reinterpret_cast<const unsigned*>(&v); }
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

// f(v) for every element v of a pack, as the accumulation type A; fp16/bf16 read by pairs. Read one
// 16-bit c10 element at a time, a bf16 pack was split right after its load into a register per
// element, twice the registers a row held in the row kernels (AdaLN's 64 x 4 tile: 63 registers, 48
// in fp16; RMSNorm's: 48, 32 in fp16), and with them fewer blocks per SM.
template <typename A, typename T, typename F>
__device__ __forceinline__ void for_each_value(const Pack<T>& p, F&& f) {
  if constexpr (kPacked2<T>) {
#pragma unroll
    for (int j = 0; j < Pack<T>::N / 2; ++j) {
      f(static_cast<A>(Packed2<T>::lo(pair(p, j))));
      f(static_cast<A>(Packed2<T>::hi(pair(p, j))));
    }
  } else {
#pragma unroll
    for (int j = 0; j < Pack<T>::N; ++j) f(static_cast<A>(p.v[j]));
  }
}

}  // namespace kh::cuda
