// diffusers' LTX-Video apply_rotary_emb on CUDA: adjacent channel pairs over the whole inner dim
// with fp32 cos/sin per channel; q and k in one grid. Each thread takes a chunk of one row:
// 16 bytes of x (and the matching fp32 table entries) where rows allow it, else one pair.
#include <ATen/Dispatch.h>

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

// CH elements per chunk: Pack<T>::N with VEC (16-byte loads), else 2 (one pair).
template <typename T, bool VEC>
__global__ void ltx_rotary_kernel(Bsc qy, Bsc qx, Bsc ky, Bsc kx, const float* __restrict__ cos,
                                  const float* __restrict__ sin, int64_t cb, int64_t cs, int64_t seq,
                                  int64_t channels, int64_t rows, int64_t chunks) {
  constexpr int CH = VEC ? Pack<T>::N : 2;
  const int64_t per_row = channels / CH;
  for (int64_t idx = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; idx < chunks;
       idx += int64_t(gridDim.x) * blockDim.x) {
    const bool is_q = idx < rows * per_row;
    const int64_t local = is_q ? idx : idx - rows * per_row;
    const int64_t row = local / per_row, c0 = (local % per_row) * CH;
    const int64_t b = row / seq, s = row % seq;
    const Bsc& x = is_q ? qx : kx;
    const Bsc& y = is_q ? qy : ky;
    const T* xp = static_cast<const T*>(x.data) + b * x.sb + s * x.ss + c0;
    T* yp = static_cast<T*>(y.data) + b * y.sb + s * y.ss + c0;
    const float* cp = cos + b * cb + s * cs + c0;
    const float* sp = sin + b * cb + s * cs + c0;
    if constexpr (VEC) {
      const Pack<T> in = kh::cuda::load_pack(xp);
      float cv[CH], sv[CH];
      constexpr int kStep = CH >= 4 ? 4 : 2;  // floats per table load: float4, or float2 for fp64 x
#pragma unroll
      for (int j = 0; j < CH; j += kStep) {
        if constexpr (kStep == 4) {
          *reinterpret_cast<float4*>(cv + j) = *reinterpret_cast<const float4*>(cp + j);
          *reinterpret_cast<float4*>(sv + j) = *reinterpret_cast<const float4*>(sp + j);
        } else {
          *reinterpret_cast<float2*>(cv + j) = *reinterpret_cast<const float2*>(cp + j);
          *reinterpret_cast<float2*>(sv + j) = *reinterpret_cast<const float2*>(sp + j);
        }
      }
      Pack<T> out;
#pragma unroll
      for (int j = 0; j < CH; j += 2) {
        const T pair[2] = {in.v[j], in.v[j + 1]};
        T res[2];
        rotate(res, pair, cv + j, sv + j);
        out.v[j] = res[0];
        out.v[j + 1] = res[1];
      }
      kh::cuda::store_pack(yp, out);
    } else {
      const T pair[2] = {xp[0], xp[1]};
      T res[2];
      rotate(res, pair, cp, sp);
      yp[0] = res[0];
      yp[1] = res[1];
    }
  }
}

Bsc bsc(const at::Tensor& t) { return {t.defined() ? t.data_ptr() : nullptr, t.defined() ? t.stride(0) : 0,
                                       t.defined() ? t.stride(1) : 0}; }

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
    const int64_t chunks = (ky ? 2 : 1) * rows * (channels / (vec ? N : 2));
    const int threads = 256;
    const unsigned grid = kh::cuda::grid_for(chunks, threads);
    const cudaStream_t stream = kh::cuda::stream_of(q);
    auto go = [&](auto kernel) {
      kernel<<<grid, threads, 0, stream>>>(bsc(qo), bsc(qx), bsc(ko), bsc(kx), c.const_data_ptr<float>(),
                                           s.const_data_ptr<float>(), c.stride(0), c.stride(1), seq, channels, rows,
                                           chunks);
    };
    vec ? go(ltx_rotary_kernel<scalar_t, true>) : go(ltx_rotary_kernel<scalar_t, false>);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
  qy.finish();
  if (ky) ky->finish();
}
