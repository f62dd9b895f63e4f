// RMSNorm on CUDA, fp32 accumulation, Qwen3RMSNorm rounding (normalise, round, weight). Rows of
// 16-byte packs stay in registers (row_registers.cuh): one read of x, one write of y. Other rows
// (unaligned, odd or very long) take a streaming kernel that reads x twice.
#include <ATen/Dispatch.h>

#include <optional>

#include "../common/checks.h"
#include "../common/cuda_common.cuh"
#include "../common/numerics.h"
#include "../common/packed_math.cuh"
#include "../common/row_registers.cuh"
#include "../common/views.h"
#include "torch_binding.h"

namespace {

using kh::cuda::Pack;

// Qwen3RMSNorm: normalise in fp32, round to the dtype, then multiply by the weight.
template <typename T, typename A>
__device__ __forceinline__ T rms_normed(T v, A inv, const T* w) {
  const A normed = kh::round_to<T>(static_cast<A>(v) * inv);
  return static_cast<T>(w ? normed * static_cast<A>(*w) : normed);
}

// A pack of rms_normed values, two at a time in packed instructions for fp16/bf16 (packed_math.cuh).
template <typename T, typename A>
__device__ __forceinline__ void store_normed(T* y, const Pack<T>& x, A inv, const Pack<T>* w) {
  Pack<T> o;
  if constexpr (kh::cuda::kPacked2<T>) {
    using P2 = kh::cuda::Packed2<T>;
    using kh::cuda::pair;
#pragma unroll
    for (int j = 0; j < Pack<T>::N / 2; ++j) {
      typename P2::type n = P2::round(P2::lo(pair(x, j)) * inv, P2::hi(pair(x, j)) * inv);
      pair(o, j) = w ? __hmul2_rn(n, pair(*w, j)) : n;
    }
  } else {
#pragma unroll
    for (int j = 0; j < Pack<T>::N; ++j) o.v[j] = rms_normed(x.v[j], inv, w ? &w->v[j] : nullptr);
  }
  kh::cuda::store_pack(y, o);
}

// EARLY: the weight packs are loaded with x, before the reduction (launch-bound grids: one memory
// round trip on the critical path instead of two).
template <typename T, int G, int P, bool EARLY = false>
__global__ __launch_bounds__(kh::cuda::block_threads<G>()) void rms_norm_rows_kernel(
    T* __restrict__ out, const T* __restrict__ in, const T* __restrict__ weight, int64_t rows, int64_t hidden,
    int64_t in_stride, int64_t out_stride, kh::cuda::RowNorm<at::opmath_type<T>> norm, bool x_l2_last) {
  using A = at::opmath_type<T>;
  using Row = kh::cuda::RowPacks<T, G, P>;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kh::cuda::rows_per_block<G>() + threadIdx.x / G;
  const int lane = threadIdx.x % G;
  const bool active = row < rows;  // inactive lanes still take part in the reduction
  Row x;
  [[maybe_unused]] Row early_w;
  A sum = 0;
  if (active) {
    x.load(in + row * in_stride, lane, hidden, !EARLY && x_l2_last);
    if constexpr (EARLY) {
      if (weight) early_w.load(weight, lane, hidden);
    }
#pragma unroll
    for (int k = 0; k < P; ++k) {
      if (Row::has(lane, k, hidden)) kh::cuda::for_each_value<A>(x.p[k], [&](A v) { sum += v * v; });
    }
  }
  sum = kh::cuda::row_sum<G>(sum);
  if (!active) return;
  const A inv = norm.inv_rms(sum);
  T* y = out + row * out_stride;
#pragma unroll
  for (int k = 0; k < P; ++k) {
    if (!Row::has(lane, k, hidden)) continue;
    const int64_t i = Row::offset(lane, k);
    Pack<T> w{};
    if constexpr (EARLY) {
      w = early_w.p[k];
    } else if (weight) {
      w = kh::cuda::load_pack(weight + i);
    }
    store_normed(y + i, x.p[k], inv, weight ? &w : nullptr);
  }
}

template <typename T, int G, bool VEC>
__global__ void rms_norm_kernel(T* out, const T* in, const T* __restrict__ weight, int64_t rows, int64_t hidden,
                                int64_t in_stride, int64_t out_stride, kh::cuda::RowNorm<at::opmath_type<T>> norm) {
  using A = at::opmath_type<T>;
  constexpr int N = Pack<T>::N;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * (blockDim.x / G) + threadIdx.x / G;
  const int lane = threadIdx.x % G;
  const bool active = row < rows;  // inactive lanes still take part in the reduction
  const T* x = in + (active ? row : 0) * in_stride;
  T* y = out + (active ? row : 0) * out_stride;

  A sum = 0;
  if (active) {
    if constexpr (VEC) {
      for (int64_t i = int64_t(lane) * N; i < hidden; i += int64_t(G) * N) {
        const Pack<T> p = kh::cuda::load_pack(x + i);
#pragma unroll
        for (int j = 0; j < N; ++j) sum += static_cast<A>(p.v[j]) * static_cast<A>(p.v[j]);
      }
    } else {
      for (int64_t i = lane; i < hidden; i += G) sum += static_cast<A>(x[i]) * static_cast<A>(x[i]);
    }
  }
  sum = kh::cuda::group_sum<G>(sum);
  if (!active) return;
  const A inv = norm.inv_rms(sum);

  auto normed = [&](T v, const T* w) { return rms_normed(v, inv, w); };
  if constexpr (VEC) {
    for (int64_t i = int64_t(lane) * N; i < hidden; i += int64_t(G) * N) {
      const Pack<T> p = kh::cuda::load_pack(x + i);
      Pack<T> w{}, o;
      if (weight) w = kh::cuda::load_pack(weight + i);
#pragma unroll
      for (int j = 0; j < N; ++j) o.v[j] = normed(p.v[j], weight ? &w.v[j] : nullptr);
      kh::cuda::store_pack(y + i, o);
    }
  } else {
    for (int64_t i = lane; i < hidden; i += G) y[i] = normed(x[i], weight ? weight + i : nullptr);
  }
}

template <typename T>
void launch(at::Tensor& y, const at::Tensor& x, const at::Tensor& w, double eps) {
  const int64_t rows = x.size(0), hidden = x.size(1);
  if (rows == 0) return;
  const T* wp = w.defined() ? w.const_data_ptr<T>() : nullptr;
  const bool vec = hidden % Pack<T>::N == 0 && kh::cuda::pack_aligned(x, {x.stride(0)}) &&
                   kh::cuda::pack_aligned(y, {y.stride(0)}) && (!wp || kh::cuda::aligned16(wp));
  const cudaStream_t stream = kh::cuda::stream_of(x);
  const int64_t packs = hidden / Pack<T>::N;
  const kh::cuda::RowNorm<at::opmath_type<T>> norm(hidden, eps);
  if (vec && kh::cuda::launch_bound_rows(rows, packs, 8)) {
    kh::cuda::with_launch_bound_tile<2>(packs, rows, [&](auto g, auto p) {
      constexpr int G = decltype(g)::value, P = decltype(p)::value;
      rms_norm_rows_kernel<T, G, P, true><<<kh::cuda::row_blocks<G>(rows), kh::cuda::block_threads<G>(), 0, stream>>>(
          y.mutable_data_ptr<T>(), x.const_data_ptr<T>(), wp, rows, hidden, x.stride(0), y.stride(0), norm, false);
    });
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return;
  }
  if (vec && !kh::cuda::few_rows(rows, hidden) && kh::cuda::register_row<kh::cuda::kRowMaxPacks>(packs)) {
    kh::cuda::with_row_tile<kh::cuda::kRowMaxPacks>(packs, [&](auto g, auto p) {
      constexpr int G = decltype(g)::value, P = decltype(p)::value;
      auto kernel = rms_norm_rows_kernel<T, G, P>;
      if constexpr (G * P <= kh::cuda::kNarrowRowPacks) {
        if (kh::cuda::early_loads_pay(kh::cuda::row_blocks<G>(rows))) kernel = rms_norm_rows_kernel<T, G, P, true>;
      }
      kernel<<<kh::cuda::row_blocks<G>(rows), kh::cuda::block_threads<G>(), 0, stream>>>(
          y.mutable_data_ptr<T>(), x.const_data_ptr<T>(), wp, rows, hidden, x.stride(0), y.stride(0), norm,
          kh::cuda::keep_reads_in_l2(2 * rows * hidden * static_cast<int64_t>(sizeof(T))));
    });
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return;
  }
  const dim3 grid = kh::cuda::row_grid(rows, hidden), block = kh::cuda::row_block(hidden);
  auto go = [&](auto kernel) {
    kernel<<<grid, block, 0, stream>>>(y.mutable_data_ptr<T>(), x.const_data_ptr<T>(), wp, rows, hidden, x.stride(0),
                                       y.stride(0), norm);
  };
  if (kh::cuda::wide_rows(hidden)) {
    vec ? go(rms_norm_kernel<T, kh::cuda::kWideGroup, true>) : go(rms_norm_kernel<T, kh::cuda::kWideGroup, false>);
  } else {
    vec ? go(rms_norm_kernel<T, kh::cuda::kNarrowGroup, true>) : go(rms_norm_kernel<T, kh::cuda::kNarrowGroup, false>);
  }
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace

void rms_norm(at::Tensor& out, const at::Tensor& input, const std::optional<at::Tensor>& weight, double eps) {
  kh::check_device("rms_norm", input, true);
  const at::Tensor w = kh::check_norm_args("rms_norm", "out", out, input, weight);
  const c10::cuda::CUDAGuard guard(input.device());
  const at::Tensor x = kh::input_view(input, kh::rows_of);
  kh::Output y(out, false, kh::rows_of);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "rms_norm_cuda",
                                  [&] { launch<scalar_t>(y.get(), x, w, eps); });
  y.finish();
}
