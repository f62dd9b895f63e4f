// RMSNorm on CUDA, fp32 accumulation, Qwen3RMSNorm rounding (normalise, round, weight). Rows of
// 16-byte packs stay in registers (row_registers.cuh): one read of x, one write of y. Other rows
// (unaligned, odd or very long) take a streaming kernel that reads x twice.
#include <ATen/Dispatch.h>

#include <algorithm>
#include <optional>

#include "../common/checks.h"
#include "../common/cuda_common.cuh"
#include "../common/numerics.h"
#include "../common/packed_math.cuh"
#include "../common/rms_normed.cuh"
#include "../common/row_registers.cuh"
#include "../common/views.h"
#include "torch_binding.h"

namespace {

using kh::cuda::Pack;
using kh::cuda::rms_normed;
using kh::cuda::store_normed;

// EARLY: the weight packs are loaded with x, before the reduction (launch-bound grids: one memory
// round trip on the critical path instead of two). R: rows a thread holds (R rows_per_block<G>() rows
// a block), their loads all issued before the first reduction.
template <typename T, int G, int P, bool EARLY = false, int R = 1>
__global__ __launch_bounds__(kh::cuda::block_threads<G>()) void rms_norm_rows_kernel(
    T* __restrict__ out, const T* __restrict__ in, const T* __restrict__ weight, int64_t rows, int64_t hidden,
    int64_t in_stride, int64_t out_stride, kh::cuda::RowNorm<at::opmath_type<T>> norm, bool x_l2_last) {
  static_assert(R == 1 || (!EARLY && G <= 32));  // one pass of shuffles per row; no early return before
  using A = at::opmath_type<T>;
  using Row = kh::cuda::RowPacks<T, G, P>;
  constexpr int kPass = kh::cuda::rows_per_block<G>();
  const int64_t first = static_cast<int64_t>(blockIdx.x) * kPass * R + threadIdx.x / G;
  const int lane = threadIdx.x % G;
  Row x[R];
  [[maybe_unused]] Row early_w;
  A sum[R];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    sum[r] = 0;
    if (first + r * kPass < rows) x[r].load(in + (first + r * kPass) * in_stride, lane, hidden, !EARLY && x_l2_last);
  }
  if constexpr (EARLY) {
    if (weight && first < rows) early_w.load(weight, lane, hidden);
  }
#pragma unroll
  for (int r = 0; r < R; ++r) {
    if (first + r * kPass >= rows) continue;  // inactive lanes still take part in the reduction
#pragma unroll
    for (int k = 0; k < P; ++k) {
      if (Row::has(lane, k, hidden)) kh::cuda::for_each_value<A>(x[r].p[k], [&](A v) { sum[r] += v * v; });
    }
  }
  // The row sums, then the epilogue: the same as fused_add_rms_norm_cuda.cu's, written out in
  // each, since as one shared function ptxas scheduled the one-pack kernels differently (RMSNorm's
  // bf16 16 x 1 x 2: 336 -> 360 instructions).
#pragma unroll
  for (int r = 0; r < R; ++r) sum[r] = kh::cuda::row_sum<G>(sum[r]);
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const int64_t row = first + r * kPass;
    if (row >= rows) return;
    const A inv = norm.inv_rms(sum[r]);
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
      store_normed(y + i, x[r].p[k], inv, weight ? &w : nullptr);
    }
  }
}

// Rows of exactly G packs, one pack a thread, R rows a thread: kOnePackRowTile's rows of 16 packs
// (128 bf16/fp16 elements: Qwen3's per-head q and k norms) at grids past early_loads_pay. What
// rms_norm_rows_kernel decides per pack or per row at run time is fixed here: no per-pack guard, the
// weight's presence a template argument and its pack loaded once for the R rows, plain loads (the
// launch leaves grids that keep_reads_in_l2 to the generic kernel), 32-bit row offsets from the
// block's first row, and no branch for the last block's missing rows: about half the generic
// kernel's instructions, as many a row as inductor's kernel (bench/gpu/NOTES.md, "128-wide rows",
// also for what did not close the remaining gap at 65536 rows).
template <typename T, int G, int R, bool WEIGHTED>
__global__ __launch_bounds__(kh::cuda::kExactRowBlock) void rms_norm_exact_rows_kernel(
    T* __restrict__ out, const T* __restrict__ in, const T* __restrict__ weight, int64_t rows, int in_stride,
    int out_stride, kh::cuda::RowNorm<at::opmath_type<T>> norm) {
  using A = at::opmath_type<T>;
  constexpr int kBlockRows = kh::cuda::exact_block_rows<G, R>(), kPass = kBlockRows / R;
  const int64_t block_first = static_cast<int64_t>(blockIdx.x) * kBlockRows;
  const int last = rows - block_first < kBlockRows ? static_cast<int>(rows - block_first) - 1 : kBlockRows - 1;
  const int local = threadIdx.x / G, lane_offset = (threadIdx.x % G) * Pack<T>::N;
  in = kh::cuda::opaque_pointer(in + block_first * in_stride);
  out = kh::cuda::opaque_pointer(out + block_first * out_stride);
  // Rows past the last one (the last block's) read the last row instead of branching: a row's G
  // lanes are all past it or none, so the sums they shuffle are never stored.
  Pack<T> x[R];
#pragma unroll
  for (int r = 0; r < R; ++r)
    x[r] = kh::cuda::load_pack_nc(in + (min(local + r * kPass, last) * in_stride + lane_offset));
  [[maybe_unused]] Pack<T> w;
  if constexpr (WEIGHTED) w = kh::cuda::load_pack(weight + lane_offset);
  A sum[R];
  kh::cuda::sums_of_squares<G>(sum, x);
  // With `return` past the last row the compiler issues the weight's load after the row sums'
  // shuffles. Skipping the missing rows' stores instead keeps it with x's, but in the op that was
  // no consistent gain (bench/gpu/NOTES.md, "128-wide rows"). So `return` stays.
#pragma unroll
  for (int r = 0; r < R; ++r) {
    if (local + r * kPass > last) return;
    kh::cuda::store_pack_whole(out + ((local + r * kPass) * out_stride + lane_offset),
                               kh::cuda::normed_pack(x[r], norm.inv_rms(sum[r]), WEIGHTED ? &w : nullptr));
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
    const bool x_l2_last = kh::cuda::keep_reads_in_l2(2 * rows * hidden * static_cast<int64_t>(sizeof(T)));
    kh::cuda::with_row_tile<kh::cuda::kRowMaxPacks>(packs, [&](auto g, auto p) {
      constexpr int G = decltype(g)::value, P = decltype(p)::value;
      auto go = [&](auto kernel, unsigned blocks) {
        kernel<<<blocks, kh::cuda::block_threads<G>(), 0, stream>>>(y.mutable_data_ptr<T>(), x.const_data_ptr<T>(), wp,
                                                                    rows, hidden, x.stride(0), y.stride(0), norm,
                                                                    x_l2_last);
      };
      if constexpr (G * P <= kh::cuda::kNarrowRowPacks) {
        if (kh::cuda::early_loads_pay(kh::cuda::row_blocks<G>(rows))) {
          return go(rms_norm_rows_kernel<T, G, P, true>, kh::cuda::row_blocks<G>(rows));
        }
      }
      // Two rows a thread (kOnePackRowTile): shorter than one, four no better (bench/gpu/NOTES.md,
      // "128-wide rows").
      if constexpr (kh::cuda::kOnePackRowTile<G, P>) {
        constexpr int R = kh::cuda::kExactRows;
        const bool exact = packs == G * P && !x_l2_last &&
                           std::max(x.stride(0), y.stride(0)) * kh::cuda::exact_block_rows<G, R>() <= INT32_MAX;
        if (exact) {
          const unsigned blocks = kh::cuda::exact_row_blocks<G, R>(rows);
          auto exact_go = [&](auto kernel) {
            kernel<<<blocks, kh::cuda::kExactRowBlock, 0, stream>>>(y.mutable_data_ptr<T>(), x.const_data_ptr<T>(), wp,
                                                                    rows, static_cast<int>(x.stride(0)),
                                                                    static_cast<int>(y.stride(0)), norm);
          };
          return wp ? exact_go(rms_norm_exact_rows_kernel<T, G, R, true>)
                    : exact_go(rms_norm_exact_rows_kernel<T, G, R, false>);
        }
        return go(rms_norm_rows_kernel<T, G, P, false, 2>, kh::cuda::row_blocks<G, 2>(rows));
      }
      go(rms_norm_rows_kernel<T, G, P>, kh::cuda::row_blocks<G>(rows));
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
