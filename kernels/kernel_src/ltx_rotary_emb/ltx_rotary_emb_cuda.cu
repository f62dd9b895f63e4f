// diffusers' LTX-Video apply_rotary_emb on CUDA: adjacent channel pairs over the whole inner dim
// with fp32 cos/sin per channel; q and k in one grid. Each thread takes a chunk of one row of q and
// the same chunk of k: 16 bytes of each (8 on small grids of the flat layout), and the matching fp32
// table entries, read once for both, where rows allow it, else one pair.
#include <ATen/Dispatch.h>

#include <cstring>
#include <optional>

#include "../common/cuda_common.cuh"
#include "../common/ltx_rotary_args.h"
#include "../common/numerics.h"
#include "torch_binding.h"

namespace {

using kh::cuda::Pack;

// A [B, S, C] tensor by its strides (the last one is 1).
struct Bsc {
  void* data;
  int64_t sb, ss;
};

template <typename T>
__device__ __forceinline__ void rotate(T (&y)[2], const T (&x)[2], const float* cos, const float* sin) {
  using A = at::opmath_type<T>;
  const A a = static_cast<A>(x[0]), b = static_cast<A>(x[1]);
  // Two products, then their sum, each rounded in fp32 as eager does (mul_rn: no FMA).
  y[0] = static_cast<T>(kh::mul_rn(a, static_cast<A>(cos[0])) - kh::mul_rn(b, static_cast<A>(sin[0])));
  y[1] = static_cast<T>(kh::mul_rn(b, static_cast<A>(cos[1])) + kh::mul_rn(a, static_cast<A>(sin[1])));
}

// CH channels of one row: a 16-byte pack where VEC (4 or 8 bytes where CH is part of a pack), else
// one pair.
template <typename T, bool VEC, int CH>
__device__ __forceinline__ void load_chunk(T (&in)[CH], const T* xp) {
  if constexpr (VEC && CH == Pack<T>::N) {
    const Pack<T> p = kh::cuda::load_pack(xp);
#pragma unroll
    for (int j = 0; j < CH; ++j) in[j] = p.v[j];
  } else if constexpr (VEC) {
    kh::cuda::load_elements<T, CH>(in, xp);
  } else {
#pragma unroll
    for (int j = 0; j < CH; ++j) in[j] = xp[j];
  }
}

// The fp32 cos and sin entries of a chunk of CH channels: 16-byte loads where VEC.
template <bool VEC, int CH>
__device__ __forceinline__ void load_tables(float (&cv)[CH], float (&sv)[CH], const float* cp, const float* sp) {
  if constexpr (VEC && CH >= 4) {
#pragma unroll
    for (int j = 0; j < CH; j += 4) {
      *reinterpret_cast<float4*>(cv + j) = *reinterpret_cast<const float4*>(cp + j);
      *reinterpret_cast<float4*>(sv + j) = *reinterpret_cast<const float4*>(sp + j);
    }
  } else if constexpr (VEC) {  // fp64 x: 2 channels per pack
    *reinterpret_cast<float2*>(cv) = *reinterpret_cast<const float2*>(cp);
    *reinterpret_cast<float2*>(sv) = *reinterpret_cast<const float2*>(sp);
  } else {
#pragma unroll
    for (int j = 0; j < CH; ++j) {
      cv[j] = cp[j];
      sv[j] = sp[j];
    }
  }
}

// A chunk of x (already loaded) rotated into y, with its table entries.
template <typename T, bool VEC, int CH>
__device__ __forceinline__ void store_rotated(T* yp, const T (&in)[CH], const float (&cv)[CH], const float (&sv)[CH]) {
  T res[CH];
#pragma unroll
  for (int j = 0; j < CH; j += 2) {
    const T pair[2] = {in[j], in[j + 1]};
    T out[2];
    const float c[2] = {cv[j], cv[j + 1]}, sn[2] = {sv[j], sv[j + 1]};
    rotate(out, pair, c, sn);
    res[j] = out[0];
    res[j + 1] = out[1];
  }
  if constexpr (VEC && CH == Pack<T>::N) {
    Pack<T> o;
#pragma unroll
    for (int j = 0; j < CH; ++j) o.v[j] = res[j];
    kh::cuda::store_pack(yp, o);
  } else if constexpr (VEC) {
    kh::cuda::store_elements<T, CH>(yp, res);
  } else {
#pragma unroll
    for (int j = 0; j < CH; ++j) yp[j] = res[j];
  }
}

// CH elements per chunk: Pack<T>::N with VEC (16-byte loads), else 2 (one pair). One thread
// rotates the same chunk of q and of k, so the fp32 tables (2/3 of the traffic of a q-only call)
// are read once for both. I is the index type: 32-bit when the chunks allow it (cheaper division).
template <typename T, bool VEC, typename I>
__global__ void ltx_rotary_kernel(Bsc qy, Bsc qx, Bsc ky, Bsc kx, const float* __restrict__ cos,
                                  const float* __restrict__ sin, int64_t cb, int64_t cs, I seq, I per_row, I chunks) {
  constexpr int CH = VEC ? Pack<T>::N : 2;
  const bool has_k = kx.data != nullptr;
  for (I idx = blockIdx.x * I(blockDim.x) + threadIdx.x; idx < chunks; idx += I(gridDim.x) * blockDim.x) {
    const I row = idx / per_row, c0 = (idx - row * per_row) * CH;
    const I b = row / seq, s = row - b * seq;
    const float* cp = cos + b * cb + s * cs + c0;
    const float* sp = sin + b * cb + s * cs + c0;
    float cv[CH], sv[CH];
    load_tables<VEC, CH>(cv, sv, cp, sp);
    // Both rows' loads go out before either store: the outputs may alias the inputs (in place), so
    // the compiler keeps a load of k after a store of q, and a launch-bound call (one row) then waits
    // for two memory round trips instead of one (bench/gpu/NOTES.md, "LTX RoPE").
    T qv[CH], kv[CH];
    load_chunk<T, VEC, CH>(qv, static_cast<const T*>(qx.data) + b * qx.sb + s * qx.ss + c0);
    if (has_k) load_chunk<T, VEC, CH>(kv, static_cast<const T*>(kx.data) + b * kx.sb + s * kx.ss + c0);
    store_rotated<T, VEC, CH>(static_cast<T*>(qy.data) + b * qy.sb + s * qy.ss + c0, qv, cv, sv);
    if (has_k) store_rotated<T, VEC, CH>(static_cast<T*>(ky.data) + b * ky.sb + s * ky.ss + c0, kv, cv, sv);
  }
}

// The common layout (diffusers' LTX blocks): q, k, their outputs and both tables contiguous [B, S, C]
// with the tables per sample (or B = 1), so that chunk i is at element i x CH of every tensor: one
// multiply-add an address, no division and no loop, a chunk of CH elements of q and of k a thread
// (CH: a 16-byte pack, half ltx_rotary_kernel's instructions; or half a pack for small grids, see
// the launch). At few tokens half packs, not the index math, closed the gap to inductor
// (bench/gpu/NOTES.md, "LTX RoPE").
template <typename T, int CH>
__global__ void ltx_rotary_flat_kernel(T* qy, const T* qx, T* ky, const T* kx, const float* __restrict__ cos,
                                       const float* __restrict__ sin, int chunks) {
  const int chunk = blockIdx.x * blockDim.x + threadIdx.x;
  if (chunk >= chunks) return;
  const int at = chunk * CH;
  float cv[CH], sv[CH];
  T qv[CH], kv[CH];
  load_tables<true, CH>(cv, sv, cos + at, sin + at);
  load_chunk<T, true, CH>(qv, qx + at);
  if (kx) load_chunk<T, true, CH>(kv, kx + at);  // before either store, as in ltx_rotary_kernel
  store_rotated<T, true, CH>(qy + at, qv, cv, sv);
  if (kx) store_rotated<T, true, CH>(ky + at, kv, cv, sv);
}

#ifndef KH_LTX_SMALL_GRID_BYTES  // a build option only for the benchmark's comparison: 4 or 8
#define KH_LTX_SMALL_GRID_BYTES 8
#endif

Bsc bsc(const at::Tensor& t) {
  return {t.defined() ? t.data_ptr() : nullptr, t.defined() ? t.stride(0) : 0, t.defined() ? t.stride(1) : 0};
}

}  // namespace

void ltx_rotary_emb(at::Tensor& q_out, const std::optional<at::Tensor>& k_out, const at::Tensor& q,
                    const std::optional<at::Tensor>& k, const at::Tensor& cos, const at::Tensor& sin) {
  kh::check_device("ltx_rotary_emb", q, true);
  // Not a structured binding: lambdas below capture them (C++20 only).
  const std::pair<at::Tensor, at::Tensor> tables = kh::check_ltx_rotary_args(q_out, k_out, q, k, cos, sin);
  const at::Tensor& c = tables.first;
  const at::Tensor& s = tables.second;
  TORCH_CHECK(c.strides() == s.strides(), "ltx_rotary_emb: cos and sin must have the same layout");
  const c10::cuda::CUDAGuard guard(q.device());
  const at::Tensor qx = kh::input_view(q, kh::last_contiguous_of);
  kh::Output qy(q_out, false, kh::last_contiguous_of);
  at::Tensor kx, k_out_ref;
  std::optional<kh::Output> ky;
  if (k && k->defined()) {
    kx = kh::input_view(*k, kh::last_contiguous_of);
    k_out_ref = *k_out;
    ky.emplace(k_out_ref, false, kh::last_contiguous_of);
  }
  const int64_t batch = q.size(0), seq = q.size(1), channels = q.size(2), rows = batch * seq;
  if (rows * channels == 0) return;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, q.scalar_type(), "ltx_rotary_emb_cuda", [&] {
    constexpr int N = Pack<scalar_t>::N;
    const at::Tensor& qo = qy.get();
    const at::Tensor ko = ky ? ky->get() : at::Tensor();
    bool vec = channels % N == 0 && kh::cuda::pack_aligned(qx, {qx.stride(0), qx.stride(1)}) &&
               kh::cuda::pack_aligned(qo, {qo.stride(0), qo.stride(1)}) &&
               kh::cuda::pack_aligned(c, {c.stride(0), c.stride(1)}) &&
               kh::cuda::pack_aligned(s, {s.stride(0), s.stride(1)});
    if (ky) {
      vec = vec && kh::cuda::pack_aligned(kx, {kx.stride(0), kx.stride(1)}) &&
            kh::cuda::pack_aligned(ko, {ko.stride(0), ko.stride(1)});
    }
    const int64_t per_row = channels / (vec ? N : 2), chunks = rows * per_row;
    const int threads = 256;
    const unsigned grid = kh::cuda::grid_for(chunks, threads);
    const cudaStream_t stream = kh::cuda::stream_of(q);
    auto go = [&](auto kernel, auto index) {
      using I = decltype(index);
      kernel<<<grid, threads, 0, stream>>>(bsc(qo), bsc(qx), bsc(ko), bsc(kx), c.const_data_ptr<float>(),
                                           s.const_data_ptr<float>(), c.stride(0), c.stride(1), I(seq), I(per_row),
                                           I(chunks));
    };
    // Flat where every tensor is contiguous [B, S, C] (a batch of one: any batch stride) and its
    // elements' offsets fit 32 bits.
    auto flat = [&](const at::Tensor& t) {
      return !t.defined() || (t.stride(1) == channels && (batch == 1 || t.stride(0) == seq * channels));
    };
    if (vec && rows * channels <= INT32_MAX && flat(qx) && flat(qo) && flat(kx) && flat(ko) && flat(c) && flat(s)) {
      auto flat_go = [&](auto kernel, int64_t flat_chunks) {
        const unsigned blocks = static_cast<unsigned>((flat_chunks + threads - 1) / threads);
        kernel<<<blocks, threads, 0, stream>>>(qo.mutable_data_ptr<scalar_t>(), qx.const_data_ptr<scalar_t>(),
                                               ko.defined() ? ko.mutable_data_ptr<scalar_t>() : nullptr,
                                               kx.defined() ? kx.const_data_ptr<scalar_t>() : nullptr,
                                               c.const_data_ptr<float>(), s.const_data_ptr<float>(),
                                               static_cast<int>(flat_chunks));
      };
      // 16-bit q and k in half packs while a grid of whole packs would hold at most 4 blocks an SM:
      // twice the threads, each with half the bytes in flight, finish sooner (inductor's grid at these
      // sizes gives a thread 1-2 elements); on larger grids half packs ran longer
      // (bench/gpu/NOTES.md, "LTX RoPE").
      // (Not `if constexpr`: the dispatch's lambda is no template, so both branches are compiled.)
      constexpr int kSmallGridChunk = sizeof(scalar_t) == 2 ? KH_LTX_SMALL_GRID_BYTES / 2 : N;
      if (kh::cuda::small_pack_grid(grid)) {  // grid: the whole packs' blocks (far below its cap)
        flat_go(ltx_rotary_flat_kernel<scalar_t, kSmallGridChunk>, chunks * N / kSmallGridChunk);
      } else {
        flat_go(ltx_rotary_flat_kernel<scalar_t, N>, chunks);
      }
      C10_CUDA_KERNEL_LAUNCH_CHECK();
      return;
    }
    // 32-bit indices while every index (and the grid-stride step past the end) fits.
    if (chunks + int64_t(grid) * threads < (int64_t(1) << 31)) {
      vec ? go(ltx_rotary_kernel<scalar_t, true, int32_t>, int32_t{})
          : go(ltx_rotary_kernel<scalar_t, false, int32_t>, int32_t{});
    } else {
      vec ? go(ltx_rotary_kernel<scalar_t, true, int64_t>, int64_t{})
          : go(ltx_rotary_kernel<scalar_t, false, int64_t>, int64_t{});
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
  qy.finish();
  if (ky) ky->finish();
}
