// LTX RoPE at few tokens: how many elements a thread, and how many threads a block? (issue 8,
// bench/gpu/NOTES.md, 2026-12-02)
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o /tmp/ltx_grid_probe bench/gpu/ltx_grid_probe.cu && /tmp/ltx_grid_probe
//
// At 1-512 tokens inductor's LTX kernel runs 0.2-0.5 us shorter than ours under Nsight Compute and
// as CUDA graphs (1 x 4096: 2.37 against 2.56 us). Its grid holds one or two elements a thread (32
// blocks of 128 threads at 1 x 4096), ours eight (a 16-byte pack of q and of k, 32 bytes of each
// fp32 table: 2 blocks of 256). Here the flat layout's rotation (ltx_rotary_emb_cuda.cu's
// ltx_rotary_flat_kernel: q and k bf16, cos and sin fp32, contiguous [T, C]) runs with E = 2, 4 or
// 8 elements a thread in blocks of 64, 128 or 256 threads, each timed with CUDA events after a
// 256 MB memset (L2 and the instruction caches cold), as bench_ops.py's default flush. Every
// variant's output is checked bit for bit against E = 8 in blocks of 256. Prints CSV.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "probe_timing.cuh"

// E consecutive elements (E / 2 channel pairs) of q and of k a thread, with eager's roundings:
// two products, then their sum, each rounded in fp32 (no FMA), then to bf16.
template <int E>
__global__ void rotate_flat(__nv_bfloat16* qy, const __nv_bfloat16* __restrict__ qx, __nv_bfloat16* ky,
                            const __nv_bfloat16* __restrict__ kx, const float* __restrict__ cos,
                            const float* __restrict__ sin, int elements) {
  static_assert(E == 2 || E == 4 || E == 8);
  const int at = (blockIdx.x * blockDim.x + threadIdx.x) * E;
  if (at >= elements) return;
  struct alignas(2 * E) Bf16s {
    __nv_bfloat16 v[E];
  };
  struct alignas(4 * E) Floats {
    float v[E];
  };
  const Floats c = *reinterpret_cast<const Floats*>(cos + at), s = *reinterpret_cast<const Floats*>(sin + at);
  const Bf16s q = *reinterpret_cast<const Bf16s*>(qx + at), k = *reinterpret_cast<const Bf16s*>(kx + at);
  auto rotated = [&](const Bf16s& x) {
    Bf16s y;
#pragma unroll
    for (int j = 0; j < E; j += 2) {
      const float a = __bfloat162float(x.v[j]), b = __bfloat162float(x.v[j + 1]);
      y.v[j] = __float2bfloat16_rn(__fadd_rn(__fmul_rn(a, c.v[j]), -__fmul_rn(b, s.v[j])));
      y.v[j + 1] = __float2bfloat16_rn(__fadd_rn(__fmul_rn(b, c.v[j + 1]), __fmul_rn(a, s.v[j + 1])));
    }
    return y;
  };
  *reinterpret_cast<Bf16s*>(qy + at) = rotated(q);
  *reinterpret_cast<Bf16s*>(ky + at) = rotated(k);
}

struct Buffers {
  __nv_bfloat16 *qx, *kx, *qy, *ky;
  float *cos, *sin;
};

template <int E>
void launch(const Buffers& b, int elements, int threads) {
  const int per_block = threads * E;
  rotate_flat<E><<<(elements + per_block - 1) / per_block, threads>>>(b.qy, b.qx, b.ky, b.kx, b.cos, b.sin, elements);
}

void launch_variant(int e, const Buffers& b, int elements, int threads) {
  if (e == 2) return launch<2>(b, elements, threads);
  if (e == 4) return launch<4>(b, elements, threads);
  launch<8>(b, elements, threads);
}

std::vector<uint16_t> output_of(const Buffers& b, int elements) {
  std::vector<uint16_t> host(2 * size_t(elements));
  CHECK(cudaMemcpy(host.data(), b.qy, elements * sizeof(uint16_t), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(host.data() + elements, b.ky, elements * sizeof(uint16_t), cudaMemcpyDeviceToHost));
  return host;
}

int main() {
  const int max_elements = 512 * 8192;
  Buffers b{};
  for (__nv_bfloat16** p : {&b.qx, &b.kx, &b.qy, &b.ky}) CHECK(cudaMalloc(p, max_elements * sizeof(__nv_bfloat16)));
  for (float** p : {&b.cos, &b.sin}) CHECK(cudaMalloc(p, max_elements * sizeof(float)));
  {  // fresh, nonzero inputs: a fixed pseudo-random pattern (the values do not change the timing)
    std::vector<uint16_t> x(max_elements);
    std::vector<float> t(max_elements);
    uint32_t r = 12345;
    for (int i = 0; i < max_elements; ++i) {
      r = r * 1664525u + 1013904223u;
      x[i] = uint16_t(0x3c00 + (r >> 22));  // bf16 bit patterns of values in [2^-7, 2): finite, varied
      t[i] = float(int32_t(r >> 8) % 2000) / 1000.0f;
    }
    for (__nv_bfloat16* p : {b.qx, b.kx}) CHECK(cudaMemcpy(p, x.data(), x.size() * 2, cudaMemcpyHostToDevice));
    for (float* p : {b.cos, b.sin}) CHECK(cudaMemcpy(p, t.data(), t.size() * 4, cudaMemcpyHostToDevice));
  }
  const size_t flush_bytes = size_t(256) << 20;
  void* flush = nullptr;
  CHECK(cudaMalloc(&flush, flush_bytes));
  std::printf("tokens,channels,elements_per_thread,threads,blocks,cold_us,matches\n");
  for (int tokens : {1, 16, 128, 512}) {
    for (int channels : {2048, 4096, 5120, 8192}) {
      const int elements = tokens * channels;
      launch_variant(8, b, elements, 256);
      CHECK(cudaDeviceSynchronize());
      const std::vector<uint16_t> expected = output_of(b, elements);
      for (int e : {8, 4, 2}) {
        for (int threads : {256, 128, 64}) {
          CHECK(cudaMemset(b.qy, 0xff, elements * 2));  // poisoned: NaN in bf16
          CHECK(cudaMemset(b.ky, 0xff, elements * 2));
          const float us = median_us(flush, flush_bytes, 10, 100, [&] { launch_variant(e, b, elements, threads); });
          const bool matches = output_of(b, elements) == expected;
          const int blocks = (elements + threads * e - 1) / (threads * e);
          std::printf("%d,%d,%d,%d,%d,%.2f,%d\n", tokens, channels, e, threads, blocks, us, matches ? 1 : 0);
        }
      }
    }
  }
  return 0;
}
