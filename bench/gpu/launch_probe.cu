// Launch-bound kernels after an L2 flush: how much of their time is the kernel's own code being
// fetched from memory? (issue 8, bench/gpu/NOTES.md, 2026-11-30)
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o /tmp/launch_probe bench/gpu/launch_probe.cu && /tmp/launch_probe
//
// Each kernel copies one 16-byte pack per thread and, in between, runs N straight-line FMAs (four
// independent chains, so about N issue cycles a warp): N sets the code size (16 bytes an
// instruction) while the memory traffic stays the same. Each is timed with CUDA events, as
// triton's do_bench does: a 256 MB memset before every run (L2 and the instruction caches cold).
// Read the cold rows against each other: beyond the N instructions' issue time, what grows with N
// is the code's fetch. The warm rows (no memset) are not a cache-hot reference: with nothing queued
// before the start event, they include the host's launch latency (2026-11-30: 6-7 us).
#include <cuda_runtime.h>

#include <cstdio>

#include "probe_timing.cuh"

template <int N>
__global__ void copy_with_code(int4* __restrict__ dst, const int4* __restrict__ src, float a, float b) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  int4 v = src[i];
  float acc[4] = {__int_as_float(v.x), __int_as_float(v.y), __int_as_float(v.z), __int_as_float(v.w)};
#pragma unroll
  for (int k = 0; k < N; ++k) asm volatile("fma.rn.f32 %0, %0, %1, %2;" : "+f"(acc[k % 4]) : "f"(a), "f"(b));
  dst[i] = int4{__float_as_int(acc[0]), __float_as_int(acc[1]), __float_as_int(acc[2]), __float_as_int(acc[3])};
}

template <int N>
float time_us(int blocks, bool cold, int4* dst, const int4* src, void* flush, size_t flush_bytes) {
  return median_us(cold ? flush : nullptr, flush_bytes, 20, 100,
                   [&] { copy_with_code<N><<<blocks, 256>>>(dst, src, 1.0001f, 1e-7f); });
}

template <int N>
void row(int blocks, int4* dst, const int4* src, void* flush, size_t flush_bytes) {
  const float cold = time_us<N>(blocks, true, dst, src, flush, flush_bytes);
  const float warm = time_us<N>(blocks, false, dst, src, flush, flush_bytes);
  std::printf("%d,%d,%d,%.2f,%.2f,%.2f\n", N, N * 16, blocks, cold, warm, cold - warm);
}

int main() {
  const size_t flush_bytes = size_t(256) << 20;
  void* flush = nullptr;
  int4 *src = nullptr, *dst = nullptr;
  const int max_blocks = 1024;
  CHECK(cudaMalloc(&flush, flush_bytes));
  CHECK(cudaMalloc(&src, sizeof(int4) * 256 * max_blocks));
  CHECK(cudaMalloc(&dst, sizeof(int4) * 256 * max_blocks));
  CHECK(cudaMemset(src, 0x3c, sizeof(int4) * 256 * max_blocks));
  std::printf("fmas,code_bytes_approx,blocks,cold_us,warm_us,cold_minus_warm_us\n");
  for (int blocks : {1, 132, 1024}) {
    row<0>(blocks, dst, src, flush, flush_bytes);
    row<64>(blocks, dst, src, flush, flush_bytes);
    row<256>(blocks, dst, src, flush, flush_bytes);
    row<512>(blocks, dst, src, flush, flush_bytes);
    row<1024>(blocks, dst, src, flush, flush_bytes);
    row<2048>(blocks, dst, src, flush, flush_bytes);
  }
  return 0;
}
