// AdaLN probe: where does bf16 AdaLN lose its bandwidth? (bench/gpu/NOTES.md, 2026-11-30)
//
// Self-contained copies of the register-row AdaLN kernel (RMSNorm without weight, then
// y = n * (1 + scale) + shift, one scale/shift row per sample) in variants that each change one
// thing, timed against a device-to-device copy of the same bytes, inputs far larger than L2.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/adaln_probe bench/gpu/adaln_probe.cu && /tmp/adaln_probe
//
// Prints CSV: variant,tokens,hidden,regs,us,copy_us,fraction_of_copy.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "probe_loads.cuh"
#include "probe_timing.cuh"

using bf = __nv_bfloat16;
using bf2 = __nv_bfloat162;
struct alignas(16) Pack {
  bf2 v[4];
};

enum Variant : int {
  kBaseline = 0,       // as in adaln_cuda.cu: scale/shift through non-restrict pointers, loaded after the sum
  kHoisted = 1,        // all scale/shift packs loaded into registers before the first store
  kEarly = 2,          // scale/shift loaded with x, before the reduction
  kRestrict = 4,       // scale/shift/x through __restrict__ pointers (the compiler may batch the loads)
  kStreamX = 8,        // x loaded with ld.global.cs (evict first: keeps scale/shift in L1)
  kStreamOut = 16,     // stores with st.global.cs
  kNoModulation = 32,  // no scale/shift loads at all (upper bound)
  kPersistent = 64,    // a grid of resident blocks loops over rows; scale/shift held in registers
  kOneRow = 128,       // only scale is read (one broadcast row, like RMSNorm's weight): y = n * scale
  kNoAllocX = 256,     // x loaded with ld.global.nc.L1::no_allocate (L2 as usual)
  kKeepMod = 512,      // scale/shift loaded with ld.global.L1::evict_last
  kXFirst = 1024,      // x loaded with ld.global.L1::evict_first
};

// The 16-byte loads with a PTX cache qualifier that the variants differ in.
PROBE_LOAD(ld_no_alloc, ".nc.L1::no_allocate")
PROBE_LOAD(ld_evict_last, ".L1::evict_last")
PROBE_LOAD(ld_evict_first, ".L1::evict_first")

__device__ __forceinline__ Pack ld(const void* p, bool stream) {
  if (stream) {
    const int4 v = __ldcs(reinterpret_cast<const int4*>(p));
    return *reinterpret_cast<const Pack*>(&v);
  }
  return *reinterpret_cast<const Pack*>(p);
}

__device__ __forceinline__ void st(void* p, const Pack& v, bool stream) {
  if (stream) {
    __stcs(reinterpret_cast<int4*>(p), *reinterpret_cast<const int4*>(&v));
  } else {
    *reinterpret_cast<Pack*>(p) = v;
  }
}

template <int G>
__device__ __forceinline__ float row_sum(float v) {
  constexpr int kWarp = G < 32 ? G : 32;
#pragma unroll
  for (int o = kWarp / 2; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  if constexpr (G > 32) {
    constexpr int kRows = G >= 256 ? 1 : 256 / G, kWarps = G / 32;
    __shared__ float partial[kRows * kWarps];
    const int warp = threadIdx.x / 32;
    if (threadIdx.x % 32 == 0) partial[warp] = v;
    __syncthreads();
    const int first = (warp / kWarps) * kWarps;
    v = 0;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) v += partial[first + w];
    __syncthreads();
  }
  return v;
}

template <bool Restrict>
struct Ptrs {
  const void* x;
  const void* sc;
  const void* sh;
};
template <>
struct Ptrs<true> {
  const bf* __restrict__ x;
  const bf* __restrict__ sc;
  const bf* __restrict__ sh;
};

template <int V>
__device__ __forceinline__ Pack ldm(const void* p) {
  if constexpr ((V & kKeepMod) != 0) return ld_evict_last(p);
  return ld(p, false);
}

template <int V>
__device__ __forceinline__ Pack modulate(const Pack& x, float inv, const Pack& sc, const Pack& sh) {
  Pack o;
  const bf2 one = __float2bfloat162_rn(1.0f);
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const bf2 n = __floats2bfloat162_rn(__low2float(x.v[j]) * inv, __high2float(x.v[j]) * inv);
    if constexpr ((V & kOneRow) != 0) {
      o.v[j] = __hmul2_rn(n, sc.v[j]);
    } else {
      o.v[j] = __hadd2_rn(__hmul2_rn(n, __hadd2_rn(one, sc.v[j])), sh.v[j]);
    }
  }
  return o;
}

template <int G, int P, int V>
__global__ __launch_bounds__(G >= 256 ? G : 256) void adaln_probe(bf* __restrict__ out, Ptrs<(V & kRestrict) != 0> in,
                                                                  int64_t rows, int hidden, float eps) {
  constexpr int kRows = G >= 256 ? 1 : 256 / G;
  constexpr bool early = (V & (kEarly | kPersistent)) != 0;
  constexpr bool nomod = (V & kNoModulation) != 0;
  const int lane = threadIdx.x % G;
  auto off = [&](int k) { return (int64_t(k) * G + lane) * 8; };
  auto has = [&](int k) { return off(k) < hidden; };
  Pack scp[P], shp[P];
  auto load_mod = [&] {
    if constexpr (!nomod) {
#pragma unroll
      for (int k = 0; k < P; ++k) {
        if (!has(k)) continue;
        scp[k] = ldm<V>(static_cast<const bf*>(in.sc) + off(k));
        if constexpr ((V & kOneRow) == 0) shp[k] = ldm<V>(static_cast<const bf*>(in.sh) + off(k));
      }
    } else {
#pragma unroll
      for (int k = 0; k < P; ++k) {
        scp[k] = Pack{{__float2bfloat162_rn(0.25f), __float2bfloat162_rn(0.25f), __float2bfloat162_rn(0.25f),
                       __float2bfloat162_rn(0.25f)}};
        shp[k] = scp[k];
      }
    }
  };
  if (V & kPersistent) load_mod();
  const int64_t first = int64_t(blockIdx.x) * kRows + threadIdx.x / G;
  const int64_t step = (V & kPersistent) ? int64_t(gridDim.x) * kRows : rows + 1;
  // Every thread of a block runs the same number of iterations (the reduction syncs the block).
  const int64_t base0 = int64_t(blockIdx.x) * kRows;
  for (int64_t base = base0, row = first; base < rows; base += step, row += step) {
    const bool active = row < rows;
    Pack x[P];
    if (active) {
#pragma unroll
      for (int k = 0; k < P; ++k) {
        if (!has(k)) continue;
        const bf* px = static_cast<const bf*>(in.x) + row * hidden + off(k);
        x[k] = (V & kNoAllocX) ? ld_no_alloc(px) : (V & kXFirst) ? ld_evict_first(px) : ld(px, (V & kStreamX) != 0);
      }
    }
    if (early && !(V & kPersistent) && active) load_mod();
    float acc = 0;
    if (active) {
#pragma unroll
      for (int k = 0; k < P; ++k) {
        if (!has(k)) continue;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const float a = __low2float(x[k].v[j]), b = __high2float(x[k].v[j]);
          acc += a * a + b * b;
        }
      }
    }
    acc = row_sum<G>(acc);
    if (active) {
      const float inv = rsqrtf(acc / hidden + eps);
      bf* y = out + row * hidden;
      if (!early && (V & kHoisted)) load_mod();
#pragma unroll
      for (int k = 0; k < P; ++k) {
        if (!has(k)) continue;
        if (!early && !(V & kHoisted)) {
          if constexpr (!nomod) {
            scp[k] = ldm<V>(static_cast<const bf*>(in.sc) + off(k));
            if constexpr ((V & kOneRow) == 0) shp[k] = ldm<V>(static_cast<const bf*>(in.sh) + off(k));
          } else {
            scp[k] = shp[k] = Pack{};
          }
        }
        st(y + off(k), modulate<V>(x[k], inv, scp[k], shp[k]), (V & kStreamOut) != 0);
      }
    }
  }
}


template <int G, int P, int V>
void time_variant(const char* name, int64_t T, int H, bf* out, const bf* x, const bf* sc, const bf* sh, void* flush,
                  size_t flush_bytes, float copy_us) {
  auto kernel = adaln_probe<G, P, V>;
  cudaFuncAttributes attr{};
  CHECK(cudaFuncGetAttributes(&attr, kernel));
  constexpr int kRows = G >= 256 ? 1 : 256 / G, threads = G >= 256 ? G : 256;
  unsigned blocks = static_cast<unsigned>((T + kRows - 1) / kRows);
  if (V & kPersistent) {
    int per_sm = 0, sms = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0));
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    blocks = std::min<unsigned>(blocks, unsigned(per_sm * sms));
  }
  Ptrs<(V & kRestrict) != 0> p{};
  p.x = x;
  p.sc = sc;
  p.sh = sh;
  const float med = median_us(flush, flush_bytes, 5, 20, [&] { kernel<<<blocks, threads>>>(out, p, T, H, 1e-6f); });
  std::printf("%s,%lld,%d,%d,%.1f,%.1f,%.3f\n", name, static_cast<long long>(T), H, attr.numRegs, med, copy_us,
              copy_us / med);
}

__global__ void fill(bf* p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    unsigned h = (unsigned(i) ^ seed) * 2654435761u;
    h ^= h >> 13;
    p[i] = __float2bfloat16((h % 2001) / 1000.0f - 1.0f);
  }
}

float copy_time(bf* dst, const bf* src, size_t n, void* flush, size_t flush_bytes) {
  return median_us(flush, flush_bytes, 5, 20,
                   [&] { CHECK(cudaMemcpyAsync(dst, src, n * sizeof(bf), cudaMemcpyDeviceToDevice)); });
}

template <int G, int P>
void all_variants(int64_t T, int H, bf* out, const bf* x, const bf* sc, const bf* sh, void* flush, size_t fb) {
  const float c = copy_time(out, x, size_t(T) * H, flush, fb);
  time_variant<G, P, kBaseline>("baseline", T, H, out, x, sc, sh, flush, fb, c);
  time_variant<G, P, kOneRow>("one_row", T, H, out, x, sc, sh, flush, fb, c);
  time_variant<G, P, kNoModulation>("no_modulation", T, H, out, x, sc, sh, flush, fb, c);
  time_variant<G, P, kStreamOut>("stream_out", T, H, out, x, sc, sh, flush, fb, c);
  time_variant<G, P, kStreamX | kStreamOut>("stream_x+out", T, H, out, x, sc, sh, flush, fb, c);
  time_variant<G, P, kNoAllocX>("noalloc_x", T, H, out, x, sc, sh, flush, fb, c);
  time_variant<G, P, kNoAllocX | kStreamOut>("noalloc_x+stream_out", T, H, out, x, sc, sh, flush, fb, c);
  time_variant<G, P, kHoisted | kStreamX | kStreamOut>("hoisted+stream_x+out", T, H, out, x, sc, sh, flush, fb, c);
  time_variant<G, P, kHoisted | kNoAllocX | kStreamOut>("hoisted+noalloc_x+stream_out", T, H, out, x, sc, sh, flush, fb,
                                                        c);
  time_variant<G, P, kPersistent | kStreamX | kStreamOut>("persistent+stream_x+out", T, H, out, x, sc, sh, flush, fb,
                                                          c);
  time_variant<G, P, kPersistent | kNoAllocX | kStreamOut>("persistent+noalloc_x+stream_out", T, H, out, x, sc, sh,
                                                           flush, fb, c);
  time_variant<G, P, kNoModulation | kStreamOut>("no_modulation+stream_out", T, H, out, x, sc, sh, flush, fb, c);
}

template <int G, int P>
void tile_variants(const char* tile, int64_t T, int H, bf* out, const bf* x, const bf* sc, const bf* sh, void* flush,
                   size_t fb) {
  const float c = copy_time(out, x, size_t(T) * H, flush, fb);
  char name[96];  // NOLINT
  std::snprintf(name, sizeof name, "%s:baseline", tile);
  time_variant<G, P, kBaseline>(name, T, H, out, x, sc, sh, flush, fb, c);
  std::snprintf(name, sizeof name, "%s:stream_x+out", tile);
  time_variant<G, P, kStreamX | kStreamOut>(name, T, H, out, x, sc, sh, flush, fb, c);
  std::snprintf(name, sizeof name, "%s:persistent+stream_x+out", tile);
  time_variant<G, P, kPersistent | kStreamX | kStreamOut>(name, T, H, out, x, sc, sh, flush, fb, c);
}

template <int G, int P>
void tail_variants(const char* tile, int64_t T, int H, bf* out, const bf* x, const bf* sc, const bf* sh, void* flush,
                   size_t fb) {
  const float c = copy_time(out, x, size_t(T) * H, flush, fb);
  char name[96];  // NOLINT
  auto named = [&](const char* v) {
    std::snprintf(name, sizeof name, "%s:%s", tile, v);
    return name;
  };
  time_variant<G, P, kBaseline>(named("baseline"), T, H, out, x, sc, sh, flush, fb, c);
  time_variant<G, P, kStreamOut>(named("stream_out"), T, H, out, x, sc, sh, flush, fb, c);
  time_variant<G, P, kStreamOut | kKeepMod>(named("stream_out+keep_mod"), T, H, out, x, sc, sh, flush, fb, c);
  time_variant<G, P, kStreamOut | kXFirst>(named("stream_out+x_first"), T, H, out, x, sc, sh, flush, fb, c);
  time_variant<G, P, kStreamOut | kKeepMod | kXFirst>(named("stream_out+keep_mod+x_first"), T, H, out, x, sc, sh, flush,
                                                      fb, c);
  time_variant<G, P, kKeepMod>(named("keep_mod"), T, H, out, x, sc, sh, flush, fb, c);
  time_variant<G, P, kNoModulation | kStreamOut>(named("no_modulation+stream_out"), T, H, out, x, sc, sh, flush, fb, c);
}

int main(int argc, char** argv) {
  const int64_t max_elems = int64_t(65536) * 8192;
  bf *x, *out, *sc, *sh;
  CHECK(cudaMalloc(&x, max_elems * sizeof(bf)));
  CHECK(cudaMalloc(&out, max_elems * sizeof(bf)));
  CHECK(cudaMalloc(&sc, 8192 * sizeof(bf)));
  CHECK(cudaMalloc(&sh, 8192 * sizeof(bf)));
  const size_t flush_bytes = size_t(256) << 20;
  void* flush;
  CHECK(cudaMalloc(&flush, flush_bytes));
  fill<<<1024, 256>>>(x, max_elems, 1);
  fill<<<8, 256>>>(sc, 8192, 2);
  fill<<<8, 256>>>(sh, 8192, 3);
  CHECK(cudaDeviceSynchronize());
  std::printf("variant,tokens,hidden,regs,us,copy_us,fraction_of_copy\n");
  if (argc > 1 && std::string(argv[1]) == "tails") {  // the third run (2026-11-30): H 5120 and mid sizes
    for (int64_t T : {4096, 8192, 65536}) {
      tail_variants<256, 4>("G256P4", T, 5120, out, x, sc, sh, flush, flush_bytes);
      tail_variants<128, 5>("G128P5", T, 5120, out, x, sc, sh, flush, flush_bytes);
      tail_variants<128, 4>("G128P4", T, 4096, out, x, sc, sh, flush, flush_bytes);
      tail_variants<64, 4>("G64P4", T, 2048, out, x, sc, sh, flush, flush_bytes);
    }
    return 0;
  }
  for (int64_t T : {16384, 65536}) {
    // The tiles of adaln_cuda.cu (row_tile_for with 4 packs per thread): 2048 -> G 64, 4096 -> 128, 8192 -> 256.
    all_variants<64, 4>(T, 2048, out, x, sc, sh, flush, flush_bytes);
    all_variants<128, 4>(T, 4096, out, x, sc, sh, flush, flush_bytes);
    all_variants<256, 4>(T, 8192, out, x, sc, sh, flush, flush_bytes);
  }
  // Other tiles (threads per row G x packs per thread P) at 65536 tokens.
  tile_variants<128, 2>("G128P2", 65536, 2048, out, x, sc, sh, flush, flush_bytes);
  tile_variants<32, 8>("G32P8", 65536, 2048, out, x, sc, sh, flush, flush_bytes);
  tile_variants<256, 2>("G256P2", 65536, 4096, out, x, sc, sh, flush, flush_bytes);
  tile_variants<64, 8>("G64P8", 65536, 4096, out, x, sc, sh, flush, flush_bytes);
  tile_variants<512, 2>("G512P2", 65536, 8192, out, x, sc, sh, flush, flush_bytes);
  tile_variants<128, 8>("G128P8", 65536, 8192, out, x, sc, sh, flush, flush_bytes);
  return 0;
}
