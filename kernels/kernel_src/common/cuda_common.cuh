// Building blocks of the CUDA kernels: 16-byte vector packs, reductions over a group of threads
// that shares a row, and the launch context (device guard, current stream).
#pragma once

#include <ATen/OpMathType.h>
#include <ATen/core/Tensor.h>
#include <ATen/cuda/detail/IntegerDivider.cuh>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace kh::cuda {

// 16 bytes of T: one vector load or store (8 x bf16/fp16, 4 x fp32, 2 x fp64).
template <typename T>
struct alignas(16) Pack {
  static constexpr int N = 16 / sizeof(T);
  T v[N];
};

template <typename T>
__device__ __forceinline__ Pack<T> load_pack(const T* p) {
  return *reinterpret_cast<const Pack<T>*>(p);
}

// W elements of T moved by one load or store of W x sizeof(T) bytes (4, 8 or 16): for the
// elementwise kernels' small grids, where a thread holds part of a 16-byte pack so that more
// threads share the bytes (inductor's kernels there give a thread 2-4 elements).
template <typename T, int W>
using ChunkWord =
    std::conditional_t<W * sizeof(T) == 16, int4, std::conditional_t<W * sizeof(T) == 8, uint2, uint32_t>>;

template <typename T, int W>
__device__ __forceinline__ void load_elements(T (&v)[W], const T* p) {
  static_assert(W * sizeof(T) == 4 || W * sizeof(T) == 8 || W * sizeof(T) == 16);
  const ChunkWord<T, W> word = *reinterpret_cast<const ChunkWord<T, W>*>(p);
  std::memcpy(v, &word, sizeof word);
}

template <typename T, int W>
__device__ __forceinline__ void store_elements(T* p, const T (&v)[W]) {
  static_assert(W * sizeof(T) == 4 || W * sizeof(T) == 8 || W * sizeof(T) == 16);
  ChunkWord<T, W> word;
  std::memcpy(&word, v, sizeof word);
  *reinterpret_cast<ChunkWord<T, W>*>(p) = word;
}

// A 16-byte load through the read-only path (ld.global.nc), for inputs no thread of the kernel
// writes; always a global load, also from an opaque_pointer (whose plain loads are generic ones).
template <typename T>
__device__ __forceinline__ Pack<T> load_pack_nc(const T* p) {
  const int4 v = __ldg(reinterpret_cast<const int4*>(p));
  return *reinterpret_cast<const Pack<T>*>(&v);
}

// A 16-byte store. Copying the Pack itself let the compiler split some stores into 2- and 4-byte
// pieces (7 for a bf16 pack in AdaLN's PTX); copied as an int4 they are at most four 4-byte stores,
// and usually one. store_pack_hinted is always one instruction.
template <typename T>
__device__ __forceinline__ void store_pack(T* p, const Pack<T>& pack) {
  *reinterpret_cast<int4*>(p) = *reinterpret_cast<const int4*>(&pack);
}

// ld.global.L1::evict_last: for small rows that every row of a big tensor re-reads (a norm's weight,
// AdaLN's scale and shift). Plain loads let the streamed rows evict them from L1 between uses.
// volatile: the load stays where it is written (the PTX of AdaLN was the same without it).
template <typename T>
__device__ __forceinline__ Pack<T> load_pack_keep(const T* p) {
  int4 v;
  asm volatile("ld.global.L1::evict_last.v4.s32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return *reinterpret_cast<const Pack<T>*>(&v);
}

// A 16-byte load with an L2 evict-last policy (and L1 evict-last), as inductor's Triton code loads
// a row's first pass: for inputs read once where a kernel's traffic overflows L2, at each op's
// measured threshold (keep_reads_in_l2; GEGLU's L2_LAST; GELU, which lost with it, never). Measured,
// not derived (bench/gpu/NOTES.md, "L2 hints"): how long the read-once lines stay in L2 against the
// output's dirty lines orders the DRAM traffic, and evict-first reads cost far more.
template <typename T>
__device__ __forceinline__ Pack<T> load_pack_l2_last(const T* p) {
  int4 v;
  asm volatile(
      "{\n .reg .b64 pol;\n createpolicy.fractional.L2::evict_last.b64 pol, 1.0;\n"
      " ld.global.L1::evict_last.L2::cache_hint.v4.s32 {%0, %1, %2, %3}, [%4], pol;\n}"
      : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
      : "l"(p));
  return *reinterpret_cast<const Pack<T>*>(&v);
}

// One 16-byte store with the cache operator picked at run time: .cs (evict first from L2) where the
// output and the input overflow L2 (the next kernel cannot find the output there anyway), so that the
// output stops evicting the rows a kernel re-reads; .wb (the default) otherwise. Written in PTX so
// that the compiler cannot split it: as a plain store in one branch of an if, it became four 4-byte
// stores (AdaLN's PTX). With evict-last modulation loads, .cs stores took AdaLN close to the copy
// bandwidth (bench/gpu/NOTES.md, "AdaLN").
template <typename T>
__device__ __forceinline__ void store_pack_hinted(T* p, const Pack<T>& pack, bool evict_first) {
  const int4 v = *reinterpret_cast<const int4*>(&pack);
  if (evict_first) {
    asm volatile("st.global.cs.v4.s32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w));
  } else {
    asm volatile("st.global.v4.s32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w));
  }
}

// A 16-byte store that is always one instruction (store_pack_hinted's plain store), where
// store_pack's was split: RMSNorm's exact-row kernel got four 4-byte stores a pack from it.
template <typename T>
__device__ __forceinline__ void store_pack_whole(T* p, const Pack<T>& pack) {
  store_pack_hinted(p, pack, false);
}

// `p` as a value the compiler cannot see through: a block's base pointer stays a pointer, so that
// 32-bit offsets from it are one wide multiply-add each (IMAD.WIDE) instead of being folded into a
// 64-bit index (four instructions an address in the exact-row kernels' SASS). The compiler no longer
// knows it for a global pointer: access it with load_pack_nc and store_pack_whole.
template <typename T>
__device__ __forceinline__ T* opaque_pointer(T* p) {
  asm("mov.b64 %0, %0;" : "+l"(p));
  return p;
}

// Attribute A of the current device, read once per device; `fallback` where it cannot be read.
template <cudaDeviceAttr A>
inline int device_attribute(int fallback) {
  constexpr int kMaxDevices = 64;
  static int values[kMaxDevices] = {};  // 0: not read yet
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= kMaxDevices) return fallback;
  if (values[device] == 0) {
    int value = 0;
    values[device] = cudaDeviceGetAttribute(&value, A, device) == cudaSuccess && value > 0 ? value : -1;
  }
  return values[device] > 0 ? values[device] : fallback;
}

// Whether a grid of `blocks`, at one 16-byte pack a thread, holds at most four blocks an SM: there
// the elementwise kernels split packs between threads (load_elements), so that more threads share
// the bytes (LTX RoPE's half packs, GELU's 8-byte chunks).
inline bool small_pack_grid(unsigned blocks) {
  return blocks <= 4u * static_cast<unsigned>(device_attribute<cudaDevAttrMultiProcessorCount>(132));
}

// Blocks of `block` threads (a multiple of 32, at most 1024; no dynamic shared memory) of Kernel that
// one SM of the current device holds at once, from its registers: read once per device and block
// size; 1 where it cannot be read.
template <auto Kernel>
int resident_blocks(int block) {
  constexpr int kMaxDevices = 64;
  static std::atomic<int> cache[kMaxDevices][33] = {};  // 0: not read yet
  int device = 0;
  if (block <= 0 || block > 1024 || block % 32 != 0 || cudaGetDevice(&device) != cudaSuccess || device < 0 ||
      device >= kMaxDevices)
    return 1;
  std::atomic<int>& cached = cache[device][block / 32];
  int blocks = cached.load(std::memory_order_relaxed);
  if (blocks == 0) {
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, Kernel, block, 0) != cudaSuccess || blocks <= 0) {
      (void)cudaGetLastError();  // clear the error; the caller's launch check must not see it
      blocks = 1;
    }
    cached.store(blocks, std::memory_order_relaxed);
  }
  return blocks;
}

// Whether `bytes` exceed the current device's L2 cache (false where its size cannot be read).
inline bool exceeds_l2(int64_t bytes) {
  const int l2 = device_attribute<cudaDevAttrL2CacheSize>(0);
  return l2 > 0 && bytes > l2;
}

// Whether a kernel moving `bytes` (every input read and output written) should read its inputs
// with load_pack_l2_last: more than twice the L2 (above it the hint gained, at 1-2 times it lost;
// bench/gpu/NOTES.md, "L2 hints").
inline bool keep_reads_in_l2(int64_t bytes) { return exceeds_l2(bytes / 2); }

inline bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

// True when `t`'s data and every stride in `strides` keep 16-byte packs of its elements aligned.
inline bool pack_aligned(const at::Tensor& t, std::initializer_list<int64_t> strides) {
  const int64_t n = 16 / static_cast<int64_t>(t.element_size());
  if (!aligned16(t.const_data_ptr())) return false;
  return std::all_of(strides.begin(), strides.end(), [n](int64_t s) { return s % n == 0; });
}

// Sum of `v` over the G consecutive threads that share a row. G <= 32: shuffles inside the warp
// (every lane of the warp must call it); G > 32: one row per block of G threads, through shared
// memory (every thread of the block must call it).
template <int G, typename A>
__device__ __forceinline__ A group_sum(A v) {
  constexpr int kWarp = G < 32 ? G : 32;
#pragma unroll
  for (int offset = kWarp / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  if constexpr (G > 32) {
    __shared__ A partial[G / 32];
    __shared__ A total;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    if (warp == 0) {
      v = lane < G / 32 ? partial[lane] : A(0);
#pragma unroll
      for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
      if (lane == 0) total = v;
    }
    __syncthreads();
    v = total;
  }
  return v;
}

// torch.rsqrt's CUDA implementation (rsqrtf), so norms round as eager does on the GPU.
__device__ __forceinline__ float rsqrt_of(float x) { return rsqrtf(x); }
__device__ __forceinline__ double rsqrt_of(double x) { return ::rsqrt(x); }

// Division by a divisor fixed for a launch (index -> row and column): for 32-bit indices a multiply
// and a shift (PyTorch's IntDivider: dividends of at most INT32_MAX), about 4 instructions against
// a division's 20; for 64-bit ones plain division.
template <typename I>
using Divider = at::cuda::detail::IntDivider<std::make_unsigned_t<I>>;

// Blocks for a grid-stride loop over `work` items: enough to fill the GPU, capped for 32-bit grids.
inline unsigned grid_for(int64_t work, int threads) {
  const int64_t blocks = (work + threads - 1) / threads;
  return static_cast<unsigned>(std::clamp<int64_t>(blocks, 1, 65535LL * 32));
}

inline cudaStream_t stream_of(const at::Tensor& t) { return c10::cuda::getCurrentCUDAStream(t.get_device()).stream(); }

}  // namespace kh::cuda

namespace kh::cuda {

// Row kernels: a warp per row (8 rows per 256-thread block) for rows of up to 1024 elements
// (per-head norms), else one 512-thread block per row.
constexpr int kNarrowGroup = 32;
constexpr int kWideGroup = 512;
constexpr int kRowsPerNarrowBlock = 8;

inline bool wide_rows(int64_t hidden) { return hidden > 1024; }

inline dim3 row_grid(int64_t rows, int64_t hidden) {
  return wide_rows(hidden) ? dim3(static_cast<unsigned>(rows))
                           : dim3(static_cast<unsigned>((rows + kRowsPerNarrowBlock - 1) / kRowsPerNarrowBlock));
}

inline dim3 row_block(int64_t hidden) {
  return dim3(wide_rows(hidden) ? kWideGroup : kNarrowGroup * kRowsPerNarrowBlock);
}

}  // namespace kh::cuda
