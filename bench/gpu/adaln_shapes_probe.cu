// AdaLN at batched video shapes: how close do the product's kernels come to a copy, and does another
// tile, register budget or cache hint come closer? (bench/gpu/NOTES.md, "AdaLN")
//
// Includes kernels/kernel_src/adaln/adaln_cuda.cu itself (its kernels only: KH_ADALN_KERNELS_ONLY), so
// the variants are the product's kernel templates, launched as its host code launches them at each
// shape (variants_for) and with other template arguments or hints. Needs only torch's headers (nothing of torch is
// linked), so it builds anywhere nvcc and a torch install are:
//
//   T=$(python3 -c 'import torch, os; print(os.path.dirname(torch.__file__))')/include
//   nvcc -O3 -std=c++20 -arch=sm_90 --expt-relaxed-constexpr -isystem $T -isystem $T/torch/csrc/api/include \
//     -I kernels/torch-ext -o /tmp/adaln_shapes_probe bench/gpu/adaln_shapes_probe.cu && /tmp/adaln_shapes_probe [runs
//     [explore]]
//
// Per shape: fresh random bf16 inputs (x [B, S, H], scale and shift [B, 1, H] as diffusers' per-sample
// modulation), every variant's output poisoned with NaN, run once and compared with a float64 reference
// computed on the host (relative error of the whole output). Then every variant, a memcpy and a 16-byte
// copy kernel of the same bytes are timed run by run in turns (bench_ops.py --interleave), each run after
// a flush and a ~50 us spin: "write" = a 256 MB memset (dirty lines in L2, as bench_ops.py's default),
// "read" = a 256 MB read (clean lines). Median of `runs` (default 100) per variant and flush.
// Prints CSV: shape,variant,regs,spill_bytes,blocks_per_sm,rel_err,flush,us,copy_us,frac_of_copy (variant quoted)
// (copy_us: the faster of the two copies in the same turns); on stderr the 2 GiB copy and a summary table.
#define KH_ADALN_KERNELS_ONLY
#include "../../kernels/kernel_src/adaln/adaln_cuda.cu"

#include <cuda_bf16.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#define CUDA_OK(x)                                                                                 \
  do {                                                                                             \
    cudaError_t status_ = (x);                                                                     \
    if (status_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(status_)); \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)

namespace probe {

using T = c10::BFloat16;
constexpr double kEps = 1e-6;

struct Shape {
  int64_t b, s, h;
  int64_t rows() const { return b * s; }
  int64_t elements() const { return b * s * h; }
  std::string name() const { return std::to_string(b) + "x" + std::to_string(s) + "x" + std::to_string(h); }
};

struct Buffers {
  T* out;
  const T* x;
  const T* scale;
  const T* shift;
};

struct Variant {
  std::string name;
  std::function<void()> launch;
  int regs = 0, spill = 0, blocks_per_sm = 0;
  bool checked = true;  // false: computes another function on purpose (timing only)
};

template <typename K>
void describe(Variant& v, K kernel, int threads) {
  cudaFuncAttributes a{};
  CUDA_OK(cudaFuncGetAttributes(&a, kernel));
  v.regs = a.numRegs;
  v.spill = static_cast<int>(a.localSizeBytes);
  CUDA_OK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&v.blocks_per_sm, kernel, threads, 0));
}

// adaln_rows_kernel<T, G, P, EARLY, PLAIN_RMS, MIN_BLOCKS> as adaln_cuda.cu launches it (x and the
// output contiguous, scale and shift broadcast over the sequence). seq = rows: every row modulated
// by sample 0 (the division skipped), for timing only. resident > 0: that many blocks an SM at most
// (dynamic shared memory the kernel does not use takes the rest of the SM's).
template <int G, int P, bool EARLY, bool PLAIN, int MINB = adaln_min_blocks<G, EARLY, PLAIN>()>
Variant rows_variant(std::string name, const Shape& sh, Buffers b, bool stream_out, bool l2_last,
                     bool one_sample = false, int resident = 0) {
  auto kernel = adaln_rows_kernel<T, G, P, EARLY, PLAIN, MINB>;
  const int64_t rows = sh.rows(), seq = one_sample ? rows : sh.s, h = sh.h;
  const unsigned blocks = kh::cuda::row_blocks<G>(rows);
  const int threads = kh::cuda::block_threads<G>();
  const Bsh<> x{b.x, sh.s * h, h}, sc{b.scale, h, 0}, sf{b.shift, h, 0};
  const kh::cuda::RowNorm<float> norm(h, kEps);
  int smem = 0;
  if (resident > 0) {
    int per_sm = 0;
    CUDA_OK(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, 0));
    smem = per_sm / (resident + 1) + 1024;
    CUDA_OK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  }
  Variant v{name + "[" + std::to_string(G) + "x" + std::to_string(P) + (PLAIN ? ",rms" : "") +
                (MINB ? ",min" + std::to_string(MINB) : "") + (stream_out ? ",cs" : "") + (l2_last ? ",l2last" : "") +
                (resident ? ",occ" + std::to_string(resident) : "") + "]",
            [=] {
              kernel<<<blocks, threads, smem>>>(b.out, sh.s * h, h, x, sc, sf, nullptr, rows, seq, h, norm, false, h,
                                                stream_out, l2_last);
            }};
  v.checked = !one_sample;
  describe(v, kernel, threads);
  if (resident > 0) CUDA_OK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&v.blocks_per_sm, kernel, threads, smem));
  return v;
}

// adaln_rms_row_block_kernel<T, G, P>: a row a block of G threads.
template <int G, int P>
Variant row_block_variant(std::string name, const Shape& sh, Buffers b, bool stream_out) {
  auto kernel = adaln_rms_row_block_kernel<T, G, P>;
  const int64_t rows = sh.rows(), h = sh.h;
  const Bsh<> sc{b.scale, h, 0}, sf{b.shift, h, 0};
  const kh::cuda::RowNorm<float> norm(h, kEps);
  const kh::cuda::Divider<uint32_t> seq(static_cast<uint32_t>(sh.s));
  Variant v{name + "[" + std::to_string(G) + "x" + std::to_string(P) + ",row-block" + (stream_out ? ",cs" : "") + "]",
            [=] {
              kernel<<<static_cast<unsigned>(rows), G>>>(b.out, h, b.x, h, sc, sf, seq, static_cast<uint32_t>(rows),
                                                         static_cast<int>(h), norm, stream_out);
            }};
  describe(v, kernel, G);
  return v;
}

__global__ void fill(__nv_bfloat16* p, size_t n, unsigned seed, float scale) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    unsigned h = (unsigned(i) * 2654435761u) ^ (seed * 0x9E3779B9u) ^ unsigned(i >> 32);
    h ^= h >> 15;
    h *= 0x2C1B3C6Du;
    h ^= h >> 12;
    // Sum of two uniforms: a triangular distribution on (-scale, scale), never all zeros.
    const float u = (h & 0xFFFF) / 65535.0f + (h >> 16) / 65535.0f - 1.0f;
    p[i] = __float2bfloat16(u * scale);
  }
}

__global__ void copy16(int4* __restrict__ dst, const int4* __restrict__ src, size_t n) {
  const size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i < n) dst[i] = src[i];
}

__global__ void read_flush(const float4* __restrict__ p, size_t n, float* sink) {
  float acc = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const float4 v = p[i];
    acc += v.x + v.y + v.z + v.w;
  }
  if (acc == 12345.678f) *sink = acc;  // never true: keeps the loads
}

__global__ void spin(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

float bf16_to_float(uint16_t bits) {
  uint32_t u = uint32_t(bits) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Relative error ||out - ref|| / ||ref|| of `out` against the float64 AdaLN of the inputs, NaN where any
// element is NaN (unwritten: the output was poisoned before the run).
double rel_error(const Shape& sh, const std::vector<uint16_t>& x, const std::vector<uint16_t>& sc,
                 const std::vector<uint16_t>& sf, const std::vector<uint16_t>& out) {
  const int threads = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
  std::vector<double> num(threads), den(threads);
  std::vector<int> nan(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (int64_t r = t; r < sh.rows(); r += threads) {
        const int64_t b = r / sh.s;
        const uint16_t* xr = &x[r * sh.h];
        double ss = 0;
        for (int64_t i = 0; i < sh.h; ++i) ss += double(bf16_to_float(xr[i])) * bf16_to_float(xr[i]);
        const double inv = 1.0 / std::sqrt(ss / double(sh.h) + kEps);
        for (int64_t i = 0; i < sh.h; ++i) {
          const double ref =
              bf16_to_float(xr[i]) * inv * (1.0 + bf16_to_float(sc[b * sh.h + i])) + bf16_to_float(sf[b * sh.h + i]);
          const double o = bf16_to_float(out[r * sh.h + i]);
          if (std::isnan(o)) nan[t] = 1;
          num[t] += (o - ref) * (o - ref);
          den[t] += ref * ref;
        }
      }
    });
  }
  for (auto& p : pool) p.join();
  double n = 0, d = 0;
  for (int t = 0; t < threads; ++t) {
    if (nan[t]) return NAN;
    n += num[t];
    d += den[t];
  }
  return std::sqrt(n / d);
}

struct Flusher {
  void* buffer;
  size_t bytes;
  float* sink;
  void operator()(bool dirty) const {
    if (dirty) {
      CUDA_OK(cudaMemsetAsync(buffer, 0, bytes));
    } else {
      read_flush<<<1056, 256>>>(static_cast<const float4*>(buffer), bytes / 16, sink);
    }
    spin<<<1, 1>>>(100000);  // about 50 us at 1.98 GHz: the host enqueues the events and the call meanwhile
  }
};

// Median us of each launch, timed run by run in turns (starting one further along the list each run).
std::vector<float> interleaved(const std::vector<std::function<void()>>& fns, const Flusher& flush, bool dirty,
                               int runs) {
  const size_t n = fns.size();
  for (auto& f : fns) {
    for (int i = 0; i < 5; ++i) f();
  }
  std::vector<cudaEvent_t> begin(n * runs), end(n * runs);
  for (auto& e : begin) CUDA_OK(cudaEventCreate(&e));
  for (auto& e : end) CUDA_OK(cudaEventCreate(&e));
  for (int run = 0; run < runs; ++run) {
    for (size_t j = 0; j < n; ++j) {
      const size_t i = (run + j) % n;
      flush(dirty);
      CUDA_OK(cudaEventRecord(begin[i * runs + run]));
      fns[i]();
      CUDA_OK(cudaEventRecord(end[i * runs + run]));
    }
    if (run % 20 == 19) CUDA_OK(cudaDeviceSynchronize());
  }
  CUDA_OK(cudaDeviceSynchronize());
  CUDA_OK(cudaGetLastError());
  std::vector<float> medians;
  for (size_t i = 0; i < n; ++i) {
    std::vector<float> us(runs);
    for (int run = 0; run < runs; ++run) {
      float ms = 0;
      CUDA_OK(cudaEventElapsedTime(&ms, begin[i * runs + run], end[i * runs + run]));
      us[run] = ms * 1000;
    }
    std::sort(us.begin(), us.end());
    medians.push_back(us[runs / 2]);
  }
  for (auto& e : begin) CUDA_OK(cudaEventDestroy(e));
  for (auto& e : end) CUDA_OK(cudaEventDestroy(e));
  return medians;
}

struct Row {
  std::string shape, variant;
  int regs, spill, blocks;
  double err;
  float us[2], copy_us[2];
};

// Rows of 320 or 384 packs (2560 or 3072 wide): v0 full_row_tile's 64 x P0 in the general kernel, new
// 128 x 3 in the RMS kernel; the row-a-block kernel in G0 = 320 or 384 threads.
template <int P0, int G0>
void wide_row_variants(std::vector<Variant>& v, const Shape& sh, Buffers b, bool l2_last, bool explore) {
  v.push_back(rows_variant<64, P0, false, false>("v0", sh, b, true, l2_last));
  v.push_back(rows_variant<128, 3, false, true>("new", sh, b, true, l2_last));
  if (explore) {
    v.push_back(rows_variant<64, P0, false, false>("l2hint", sh, b, true, !l2_last));
    v.push_back(rows_variant<64, P0, false, false>("plainstore", sh, b, false, l2_last));
    v.push_back(rows_variant<64, P0, false, false>("onesample", sh, b, true, l2_last, true));
    v.push_back(rows_variant<64, P0, false, false>("fewer", sh, b, true, l2_last, false, 3));
    v.push_back(rows_variant<64, P0, false, true, 5>("rms", sh, b, true, l2_last));
    v.push_back(rows_variant<64, P0, false, true, 4>("rms", sh, b, true, l2_last));
    v.push_back(rows_variant<256, 2, false, true>("rms", sh, b, true, l2_last));
  }
  if (sh.b > 1) v.push_back(rows_variant<128, 3, false, true>("onesample", sh, b, true, l2_last, true));
  if (sh.b > 1 || explore) v.push_back(row_block_variant<G0, 1>("rowblock", sh, b, true));
}

// Per shape, "v0" is adaln_cuda.cu's pick before 2026-12-04 and "new" its pick since (by its rules, which
// depend on the L2 size printed first); "onesample" is a tile with every row modulated by sample 0,
// "rowblock" a row a block with scale and shift loaded with x. `explore`: the variants of the first run
// (2026-12-04: other hints, register budgets and tiles around v0's).
std::vector<Variant> variants_for(const Shape& sh, Buffers b, bool explore) {
  std::vector<Variant> v;
  const int64_t bytes = 2 * sh.elements() * 2;
  const bool l2_last = kh::cuda::keep_reads_in_l2(bytes);
  if (sh.h == 2560) {
    wide_row_variants<5, 320>(v, sh, b, l2_last, explore);
  } else if (sh.h == 3072) {
    wide_row_variants<6, 384>(v, sh, b, l2_last, explore);
  } else if (sh.h == 2048) {  // 256 packs past 1.5 x L2: with_row_tile's 64 x 4, RMS kernel (unchanged)
    v.push_back(rows_variant<64, 4, false, true>("v0", sh, b, true, l2_last));
    if (explore) {
      v.push_back(rows_variant<64, 4, false, true>("l2hint", sh, b, true, !l2_last));
      v.push_back(rows_variant<128, 2, false, true>("rms", sh, b, true, l2_last));
      v.push_back(row_block_variant<256, 1>("rowblock", sh, b, true));
    }
  } else if (sh.h == 4096) {  // 512 packs past 1.5 x L2: with_row_tile's 128 x 4, RMS kernel (unchanged)
    v.push_back(rows_variant<128, 4, false, true>("v0", sh, b, true, l2_last));
    if (explore) {
      v.push_back(rows_variant<128, 4, false, false>("generic", sh, b, true, l2_last));
      v.push_back(rows_variant<256, 2, false, true>("rms", sh, b, true, l2_last));
      v.push_back(row_block_variant<512, 1>("rowblock", sh, b, true));
    }
  }
  return v;
}

}  // namespace probe

int main(int argc, char** argv) {
  using namespace probe;
  const int runs = argc > 1 ? std::atoi(argv[1]) : 100;
  const bool explore = argc > 2 && std::string(argv[2]) == "explore";
  int l2 = 0, sms = 0;
  CUDA_OK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  CUDA_OK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  std::fprintf(stderr, "L2 %d bytes, %d SMs, %d runs a variant and flush\n", l2, sms, runs);
  const std::vector<Shape> shapes = {{2, 5000, 2560},  {4, 4321, 3072}, {1, 16384, 3072},
                                     {1, 10000, 2560}, {2, 7392, 2048}, {2, 7392, 4096}};
  int64_t max_elems = 0;
  for (auto& s : shapes) max_elems = std::max(max_elems, s.elements());
  T *x, *out, *scale, *shift;
  CUDA_OK(cudaMalloc(&x, max_elems * sizeof(T)));
  CUDA_OK(cudaMalloc(&out, max_elems * sizeof(T)));
  CUDA_OK(cudaMalloc(&scale, 4 * 8192 * sizeof(T)));
  CUDA_OK(cudaMalloc(&shift, 4 * 8192 * sizeof(T)));
  Flusher flush{nullptr, size_t(256) << 20, nullptr};
  CUDA_OK(cudaMalloc(&flush.buffer, flush.bytes));
  CUDA_OK(cudaMalloc(&flush.sink, sizeof(float)));
  CUDA_OK(cudaMemset(flush.buffer, 0, flush.bytes));

  {  // the ceiling: a 2 GiB device-to-device copy (1 GiB read, 1 GiB written)
    void *a, *c;
    const size_t n = size_t(1) << 30;
    CUDA_OK(cudaMalloc(&a, n));
    CUDA_OK(cudaMalloc(&c, n));
    const auto t = interleaved({[&] { CUDA_OK(cudaMemcpyAsync(c, a, n, cudaMemcpyDeviceToDevice)); }}, flush, true, 10);
    std::fprintf(stderr, "2 GiB copy: %.1f us, %.0f GB/s\n", t[0], 2.0 * n / t[0] / 1e3);
    CUDA_OK(cudaFree(a));
    CUDA_OK(cudaFree(c));
  }

  std::printf("shape,variant,regs,spill_bytes,blocks_per_sm,rel_err,flush,us,copy_us,frac_of_copy\n");
  std::vector<Row> table;
  unsigned seed = 1;
  for (const Shape& sh : shapes) {
    const size_t n = sh.elements();
    fill<<<1024, 256>>>(reinterpret_cast<__nv_bfloat16*>(x), n, seed++, 2.0f);
    fill<<<64, 256>>>(reinterpret_cast<__nv_bfloat16*>(scale), sh.b * sh.h, seed++, 0.5f);
    fill<<<64, 256>>>(reinterpret_cast<__nv_bfloat16*>(shift), sh.b * sh.h, seed++, 0.5f);
    CUDA_OK(cudaDeviceSynchronize());
    std::vector<uint16_t> hx(n), hsc(sh.b * sh.h), hsf(sh.b * sh.h), hout(n);
    CUDA_OK(cudaMemcpy(hx.data(), x, n * 2, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(hsc.data(), scale, hsc.size() * 2, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(hsf.data(), shift, hsf.size() * 2, cudaMemcpyDeviceToHost));
    const int64_t bytes = 2 * int64_t(n) * 2;
    std::fprintf(stderr, "%s: %.1f MB; over L2 %d, 1.5 x L2 %d, keep_reads_in_l2 %d\n", sh.name().c_str(), bytes / 1e6,
                 kh::cuda::exceeds_l2(bytes), kh::cuda::exceeds_l2(bytes / 3 * 2), kh::cuda::keep_reads_in_l2(bytes));
    std::vector<Variant> vs = variants_for(sh, Buffers{out, x, scale, shift}, explore);
    std::vector<double> errs;
    for (auto& v : vs) {
      CUDA_OK(cudaMemset(out, 0xFF, n * 2));  // NaN in bf16
      v.launch();
      CUDA_OK(cudaGetLastError());
      CUDA_OK(cudaDeviceSynchronize());
      CUDA_OK(cudaMemcpy(hout.data(), out, n * 2, cudaMemcpyDeviceToHost));
      errs.push_back(v.checked ? rel_error(sh, hx, hsc, hsf, hout) : -1);
    }
    std::vector<std::function<void()>> fns;
    for (auto& v : vs) fns.push_back(v.launch);
    fns.push_back([=] { CUDA_OK(cudaMemcpyAsync(out, x, n * 2, cudaMemcpyDeviceToDevice)); });
    const size_t packs = n / 8;
    fns.push_back([=] {
      copy16<<<static_cast<unsigned>((packs + 255) / 256), 256>>>(reinterpret_cast<int4*>(out),
                                                                  reinterpret_cast<const int4*>(x), packs);
    });
    float us[2][64], copy[2];
    for (int dirty = 1; dirty >= 0; --dirty) {
      const auto med = interleaved(fns, flush, dirty, runs);
      const float c = std::min(med[vs.size()], med[vs.size() + 1]);
      copy[dirty] = c;
      for (size_t i = 0; i < vs.size(); ++i) us[dirty][i] = med[i];
      std::printf("%s,copy:memcpy,,,,,%s,%.2f,%.2f,%.3f\n", sh.name().c_str(), dirty ? "write" : "read", med[vs.size()],
                  c, c / med[vs.size()]);
      std::printf("%s,copy:kernel,,,,,%s,%.2f,%.2f,%.3f\n", sh.name().c_str(), dirty ? "write" : "read",
                  med[vs.size() + 1], c, c / med[vs.size() + 1]);
    }
    for (size_t i = 0; i < vs.size(); ++i) {
      for (int dirty = 1; dirty >= 0; --dirty) {
        std::printf("%s,\"%s\",%d,%d,%d,%.3g,%s,%.2f,%.2f,%.3f\n", sh.name().c_str(), vs[i].name.c_str(), vs[i].regs,
                    vs[i].spill, vs[i].blocks_per_sm, errs[i], dirty ? "write" : "read", us[dirty][i], copy[dirty],
                    copy[dirty] / us[dirty][i]);
      }
      table.push_back({sh.name(),
                       vs[i].name,
                       vs[i].regs,
                       vs[i].spill,
                       vs[i].blocks_per_sm,
                       errs[i],
                       {us[0][i], us[1][i]},
                       {copy[0], copy[1]}});
    }
    std::fflush(stdout);
  }
  std::fprintf(stderr, "\n%-12s %-34s %4s %5s %3s %8s | %8s %8s %6s | %8s %8s %6s\n", "shape", "variant", "regs",
               "spill", "blk", "rel_err", "write us", "copy", "frac", "read us", "copy", "frac");
  for (const Row& r : table) {
    std::fprintf(stderr, "%-12s %-34s %4d %5d %3d %8.2g | %8.2f %8.2f %6.3f | %8.2f %8.2f %6.3f\n", r.shape.c_str(),
                 r.variant.c_str(), r.regs, r.spill, r.blocks, r.err, r.us[1], r.copy_us[1], r.copy_us[1] / r.us[1],
                 r.us[0], r.copy_us[0], r.copy_us[0] / r.us[0]);
  }
  return 0;
}
