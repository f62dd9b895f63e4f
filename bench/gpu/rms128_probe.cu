// RMSNorm on rows of 128 bf16 at 8192-65536 rows: which grid and which row loop reach inductor's
// time? (issue 8, bench/gpu/NOTES.md, 2026-12-02)
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o /tmp/rms128_probe bench/gpu/rms128_probe.cu -lcuda && /tmp/rms128_probe
//
// At 65536 x 128 inductor's kernel (blocks of 64 threads, 16 threads a row, two rows a thread)
// runs 9.18 us under Nsight Compute against our 9.66-10.05 (rms_norm_cuda.cu's
// rms_norm_exact_rows_kernel: blocks of 256, two rows a thread), though both now execute 37 warp
// instructions a row. Here the same row arithmetic runs in every variant, which differ in one of:
// threads a block, rows a thread, stores with st.global.cs, and a persistent grid that loads its
// next rows before it stores the current ones. Each is timed with CUDA events after a flush that
// leaves L2 dirty (a 256 MB memset, bench_ops.py's default; also followed by its 50 us spin) and
// after one that leaves it clean (a kernel reading 256 MB), against a copy of the same bytes.
// Outputs are checked bit for bit against the first variant. Prints CSV.
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "probe_loads.cuh"
#include "probe_timing.cuh"

using bf = __nv_bfloat16;
constexpr int kHidden = 128, kLanes = 16;  // 16 threads a row, one 16-byte pack (8 bf16) each

struct alignas(16) Pack {
  bf v[8];
};

__device__ __forceinline__ Pack load_nc(const bf* p) {
  const int4 v = __ldg(reinterpret_cast<const int4*>(p));
  Pack r;
  std::memcpy(&r, &v, sizeof r);
  return r;
}

// Plain loads (ld.global, as Triton emits for inductor's x) instead of the read-only path, and
// L1::evict_last (as inductor loads the weight).
PROBE_LOAD(load_plain, "")
PROBE_LOAD(load_keep, ".L1::evict_last")

enum Load { kReadOnly, kPlain, kPlainWeightKept };

template <int LOAD>
__device__ __forceinline__ Pack load_x(const bf* p) {
  if constexpr (LOAD == kReadOnly) return load_nc(p);
  return load_plain(p);
}

template <int LOAD>
__device__ __forceinline__ Pack load_weight(const bf* p) {
  if constexpr (LOAD == kReadOnly) return load_nc(p);
  if constexpr (LOAD == kPlain) return load_plain(p);
  return load_keep(p);
}

template <bool STREAM>
__device__ __forceinline__ void store(bf* p, const Pack& x) {
  int4 v;
  std::memcpy(&v, &x, sizeof v);
  if constexpr (STREAM) {
    __stcs(reinterpret_cast<int4*>(p), v);
  } else {
    asm volatile("st.global.v4.s32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
                 : "memory");
  }
}

__device__ __forceinline__ float row_sum(float s) {  // over the 16 lanes of a row
#pragma unroll
  for (int m = kLanes / 2; m > 0; m /= 2) s += __shfl_xor_sync(0xffffffffu, s, m);
  return s;
}

__device__ __forceinline__ float squares(const Pack& x) {
  float s = 0;
#pragma unroll
  for (int j = 0; j < 8; ++j) s += __bfloat162float(x.v[j]) * __bfloat162float(x.v[j]);
  return s;
}

// eager's order: x * inv rounded to bf16, then times the weight, rounded again
__device__ __forceinline__ Pack normed(const Pack& x, float inv, const Pack& w) {
  Pack y;
#pragma unroll
  for (int j = 0; j < 8; ++j)
    y.v[j] = __float2bfloat16_rn(__bfloat162float(__float2bfloat16_rn(__bfloat162float(x.v[j]) * inv)) *
                                 __bfloat162float(w.v[j]));
  return y;
}

__device__ __forceinline__ float inv_rms(float sum) {
  return rsqrtf(sum * (1.0f / kHidden) + 1e-6f);
}

// The R rows of a thread (rows first + r * pass), loaded, normed and stored (rows past `rows` not).
template <int R, bool STREAM>
__device__ __forceinline__ void norm_rows(bf* out, const Pack (&x)[R], const Pack& w, int first, int pass, int rows,
                                          int lane) {
  float s[R];
#pragma unroll
  for (int r = 0; r < R; ++r) s[r] = squares(x[r]);
#pragma unroll
  for (int r = 0; r < R; ++r) s[r] = row_sum(s[r]);
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const int row = first + r * pass;
    if (row < rows) store<STREAM>(out + row * kHidden + lane, normed(x[r], inv_rms(s[r]), w));
  }
}

// One chunk of BLOCK / 16 * R rows a block, R rows a thread, all loads before the first store.
template <int BLOCK, int R, bool STREAM, int LOAD>
__global__ __launch_bounds__(BLOCK) void rows_kernel(bf* __restrict__ out, const bf* __restrict__ in,
                                                     const bf* __restrict__ weight, int rows) {
  constexpr int kPass = BLOCK / kLanes;
  const int first = blockIdx.x * kPass * R, local = threadIdx.x / kLanes, lane = threadIdx.x % kLanes * 8;
  Pack x[R];
#pragma unroll
  for (int r = 0; r < R; ++r) x[r] = load_x<LOAD>(in + min(first + local + r * kPass, rows - 1) * kHidden + lane);
  const Pack w = load_weight<LOAD>(weight + lane);
  norm_rows<R, STREAM>(out, x, w, first + local, kPass, rows, lane);
}

// A grid of resident blocks, each looping over chunks gridDim.x apart; the next chunk's loads are
// issued before the current chunk's stores, so a thread always has a chunk in flight.
template <int BLOCK, int R, bool STREAM>
__global__ __launch_bounds__(BLOCK) void persistent_kernel(bf* __restrict__ out, const bf* __restrict__ in,
                                                           const bf* __restrict__ weight, int rows) {
  constexpr int kPass = BLOCK / kLanes, kChunk = kPass * R;
  const int chunks = (rows + kChunk - 1) / kChunk, local = threadIdx.x / kLanes, lane = threadIdx.x % kLanes * 8;
  int c = blockIdx.x;
  if (c >= chunks) return;
  auto load_chunk = [&](int chunk, Pack* x) {
#pragma unroll
    for (int r = 0; r < R; ++r) x[r] = load_nc(in + min(chunk * kChunk + local + r * kPass, rows - 1) * kHidden + lane);
  };
  const Pack w = load_nc(weight + lane);
  Pack x[R];
  load_chunk(c, x);
  for (; c < chunks; c += gridDim.x) {
    Pack next[R];
    if (c + static_cast<int>(gridDim.x) < chunks) load_chunk(c + gridDim.x, next);
    norm_rows<R, STREAM>(out, x, w, c * kChunk + local, kPass, rows, lane);
#pragma unroll
    for (int r = 0; r < R; ++r) x[r] = next[r];
  }
}

__global__ void copy_kernel(int4* __restrict__ out, const int4* __restrict__ in, int packs) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < packs) out[i] = __ldg(in + i);
}

// Spins one thread for `cycles` clock cycles: bench_ops.py's torch.cuda._sleep after its flush.
__global__ void spin_kernel(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

// Reads `bytes` (leaving L2 full of clean lines); the store never happens for these inputs.
__global__ void read_flush_kernel(const int4* __restrict__ in, size_t packs, int* sink) {
  int acc = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < packs; i += size_t(gridDim.x) * blockDim.x) {
    const int4 v = __ldcs(in + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x7fffffff) *sink = acc;
}

struct Variant {
  std::string name;
  int threads;
  int rows_a_thread;
  bool persistent;
  void (*kernel)(bf*, const bf*, const bf*, int);
  CUfunction real = nullptr;  // rms_norm_exact_rows_kernel from a cubin, launched instead of `kernel`
};

#define CHECK_CU(x)                                                         \
  do {                                                                      \
    CUresult r = (x);                                                       \
    if (r != CUDA_SUCCESS) {                                                \
      const char* what = nullptr;                                           \
      cuGetErrorString(r, &what);                                           \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, what); \
      std::exit(1);                                                         \
    }                                                                       \
  } while (0)

// The product's kernel itself (rms_norm_cuda.cu's rms_norm_exact_rows_kernel<bf16, 16, 2, true>,
// compiled to a cubin by the caller): the same kernel as in a PyTorch process, in this probe's
// context. Its parameters: out, in, weight, int64 rows, int in_stride, int out_stride, and
// RowNorm<float> {inv_hidden, eps}.
void launch_real(CUfunction f, int threads, int rows_a_thread, bf* out, const bf* in, const bf* weight, int rows) {
  struct RowNorm {
    float inv_hidden, eps;
  } norm{1.0f / kHidden, 1e-6f};
  int64_t rows64 = rows;
  int stride = kHidden;
  void* params[] = {&out, &in, &weight, &rows64, &stride, &stride, &norm};
  const int block_rows = threads / kLanes * rows_a_thread;
  CHECK_CU(cuLaunchKernel(f, (rows + block_rows - 1) / block_rows, 1, 1, threads, 1, 1, 0, nullptr, params, nullptr));
}

template <int BLOCK, int R, bool STREAM, bool PERSISTENT, int LOAD = kReadOnly>
Variant variant(const char* name) {
  if constexpr (PERSISTENT) return {name, BLOCK, R, true, persistent_kernel<BLOCK, R, STREAM>};
  return {name, BLOCK, R, false, rows_kernel<BLOCK, R, STREAM, LOAD>};
}

// rms128_probe [CUBIN FUNCTION [THREADS]]: with a cubin of rms_norm_cuda.cu and the mangled name of
// rms_norm_exact_rows_kernel<c10::BFloat16, 16, 2, true> in it, also times that kernel ("real"),
// in blocks of THREADS (kExactRowBlock of its build; 128 by default).
int main(int argc, char** argv) {
  const int max_rows = 65536;
  const size_t elements = size_t(max_rows) * kHidden;
  bf *in, *out, *weight;
  CHECK(cudaMalloc(&in, elements * 2));
  CHECK(cudaMalloc(&out, elements * 2));
  CHECK(cudaMalloc(&weight, kHidden * 2));
  {  // fixed pseudo-random, nonzero inputs (the values do not change the timing)
    std::vector<uint16_t> x(elements);
    uint32_t r = 12345;
    for (auto& v : x) {
      r = r * 1664525u + 1013904223u;
      v = uint16_t(0x3c00 + (r >> 22)) | uint16_t(r & 0x8000);  // +-[2^-7, 2)
    }
    CHECK(cudaMemcpy(in, x.data(), x.size() * 2, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(weight, x.data() + 777, kHidden * 2, cudaMemcpyHostToDevice));
  }
  const size_t flush_bytes = size_t(256) << 20;
  void* flush = nullptr;
  int* sink = nullptr;
  CHECK(cudaMalloc(&flush, flush_bytes));
  CHECK(cudaMemset(flush, 1, flush_bytes));
  CHECK(cudaMalloc(&sink, sizeof(int)));
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));

  std::vector<Variant> variants = {
      variant<256, 2, false, false>("256x2"),  // rms_norm_exact_rows_kernel's first tile
      variant<128, 2, false, false>("128x2"),  // ... and its tile since (kExactRowBlock)
      variant<128, 2, false, false, kPlain>("128x2_plain"),
      variant<128, 2, false, false, kPlainWeightKept>("128x2_plain_wkept"),
      variant<64, 2, false, false>("inductor_64x2"),
      variant<64, 2, false, false, kPlain>("64x2_plain"),
      variant<64, 2, false, false, kPlainWeightKept>("inductor_64x2_plain_wkept"),
      variant<128, 2, true, false>("128x2_cs"),
      variant<512, 2, false, false>("512x2"),
      variant<256, 1, true, true>("persistent_256x1_cs"),
  };
  if (argc >= 3) {
    CUmodule module;
    CUfunction real;
    CHECK_CU(cuModuleLoad(&module, argv[1]));
    CHECK_CU(cuModuleGetFunction(&real, module, argv[2]));
    variants.push_back({"real_exact_rows_kernel", argc >= 4 ? std::atoi(argv[3]) : 128, 2, false, nullptr, real});
  }
  // The first run (2026-12-02, one round) also had 64x1 (0.68-0.83 of copy), 128x4, 256x4, 256x1,
  // 256x2_cs and the persistent 256x2, 128x2 and 256x1, none ahead of 128x2 after the memset flush.
  std::vector<uint16_t> expected(elements), got(elements);
  std::printf("round,rows,flush,variant,threads,rows_a_thread,blocks,us,copy_us,fraction_of_copy,matches\n");
  for (int round = 0; round < 3; ++round)  // rounds apart in time: the spread of a variant's medians
    for (int rows : {8192, 16384, 32768, 65536}) {
      const size_t bytes = size_t(rows) * kHidden * 2;
      // dirty_spin: the memset, then bench_ops.py's 100000-cycle spin (about 50 us) before the run
      for (const char* mode : {"dirty", "clean", "dirty_spin"}) {
        const bool dirty = std::strncmp(mode, "dirty", 5) == 0, spin = std::strcmp(mode, "dirty_spin") == 0;
        auto timed = [&](auto&& launch) {
          return median_us_after(
              [&](int rep) {
                if (dirty) {
                  CHECK(cudaMemsetAsync(flush, rep & 0xff, flush_bytes));
                } else {
                  read_flush_kernel<<<4 * sms, 1024>>>(static_cast<const int4*>(flush), flush_bytes / 16, sink);
                }
                if (spin) spin_kernel<<<1, 1>>>(100000);
              },
              10, 100, launch);
        };
        const int packs = static_cast<int>(bytes / 16);
        const float copy_us = timed([&] {
          copy_kernel<<<(packs + 255) / 256, 256>>>(reinterpret_cast<int4*>(out), reinterpret_cast<const int4*>(in),
                                                    packs);
        });
        for (size_t v = 0; v < variants.size(); ++v) {
          const Variant& var = variants[v];
          const int chunk = var.threads / kLanes * var.rows_a_thread, chunks = (rows + chunk - 1) / chunk;
          int blocks = chunks;
          if (var.real != nullptr) {
            CHECK(cudaMemset(out, 0xff, bytes));
            const float us = timed([&] { launch_real(var.real, var.threads, 2, out, in, weight, rows); });
            CHECK(cudaMemcpy(got.data(), out, bytes, cudaMemcpyDeviceToHost));
            int differ = 0;  // its sums add in another order: a last-bit difference is allowed
            for (size_t i = 0; i < got.size() && i < bytes / 2; ++i) {
              const int d = int(got[i]) - int(expected[i]);
              differ += d < -1 || d > 1;
            }
            std::printf("%d,%d,%s,%s,%d,%d,%d,%.2f,%.2f,%.3f,%d\n", round, rows, mode, var.name.c_str(), var.threads, 2,
                        (rows + var.threads / kLanes * 2 - 1) / (var.threads / kLanes * 2), us, copy_us, copy_us / us,
                        differ == 0 ? 1 : 0);
            continue;
          }
          if (var.persistent) {
            int per_sm = 0;
            CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, var.kernel, var.threads, 0));
            blocks = std::min(chunks, per_sm * sms);
          }
          CHECK(cudaMemset(out, 0xff, bytes));  // poisoned: NaN in bf16
          const float us = timed([&] { var.kernel<<<blocks, var.threads>>>(out, in, weight, rows); });
          CHECK(cudaMemcpy(got.data(), out, bytes, cudaMemcpyDeviceToHost));
          if (v == 0) std::memcpy(expected.data(), got.data(), bytes);
          if (v == 0 && round == 0) {  // the first variant against a float64 reference
            std::vector<uint16_t> x(bytes / 2), w(kHidden);
            CHECK(cudaMemcpy(x.data(), in, bytes, cudaMemcpyDeviceToHost));
            CHECK(cudaMemcpy(w.data(), weight, kHidden * 2, cudaMemcpyDeviceToHost));
            auto value = [](uint16_t b) {
              const uint32_t u = uint32_t(b) << 16;
              float f;
              std::memcpy(&f, &u, 4);
              return double(f);
            };
            double worst = 0;
            for (int row = 0; row < rows; ++row) {
              double sum = 0;
              for (int i = 0; i < kHidden; ++i) sum += value(x[row * kHidden + i]) * value(x[row * kHidden + i]);
              const double inv = 1 / std::sqrt(sum / kHidden + 1e-6);
              for (int i = 0; i < kHidden; ++i) {
                const double ref = value(x[row * kHidden + i]) * inv * value(w[i]);
                worst = std::max(worst, std::abs(value(got[row * kHidden + i]) - ref) / (std::abs(ref) + 1e-3));
              }
            }
            std::fprintf(stderr, "%d rows: %s relative error %.2e against float64\n", rows, var.name.c_str(), worst);
          }
          const bool matches = std::memcmp(expected.data(), got.data(), bytes) == 0;
          std::printf("%d,%d,%s,%s,%d,%d,%d,%.2f,%.2f,%.3f,%d\n", round, rows, mode, var.name.c_str(), var.threads,
                      var.rows_a_thread, blocks, us, copy_us, copy_us / us, matches ? 1 : 0);
        }
      }
    }
  return 0;
}
