// fused_add_rms_norm on CUDA, in place: residual <- input + residual (rounded), input <- its
// RMSNorm. Same row layouts as rms_norm_cuda.cu: rows that fit stay in registers (read x and r
// once, write both once: 8 bytes per bf16 element); the streaming kernel re-reads in its second
// pass exactly the residual elements each thread wrote in the first.
#include <ATen/Dispatch.h>

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

// EARLY: the weight packs are loaded with x and r, before the reduction (launch-bound grids: one
// memory round trip on the critical path instead of two, as in rms_norm_cuda.cu). R: rows a thread
// holds (as in rms_norm_cuda.cu).
template <typename T, int G, int P, bool EARLY = false, int R = 1>
__global__ __launch_bounds__(kh::cuda::block_threads<G>()) void fused_add_rms_norm_rows_kernel(
    T* __restrict__ input, T* __restrict__ residual, const T* __restrict__ weight, int64_t rows, int64_t hidden,
    int64_t in_stride, int64_t res_stride, kh::cuda::RowNorm<at::opmath_type<T>> norm, bool l2_last) {
  static_assert(R == 1 || (!EARLY && G <= 32));  // one pass of shuffles per row; no early return before
  using A = at::opmath_type<T>;
  using Row = kh::cuda::RowPacks<T, G, P>;
  constexpr int kPass = kh::cuda::rows_per_block<G>();
  const int64_t first = static_cast<int64_t>(blockIdx.x) * kPass * R + threadIdx.x / G;
  const int lane = threadIdx.x % G;
  Row s[R];  // x, then the rounded sum x + r
  [[maybe_unused]] Row early_w;
  A sum[R];
  {
    Row b[R];
#pragma unroll
    for (int q = 0; q < R; ++q) {
      sum[q] = 0;
      const int64_t row = first + q * kPass;
      if (row < rows) {
        s[q].load(input + row * in_stride, lane, hidden, !EARLY && l2_last);
        b[q].load(residual + row * res_stride, lane, hidden, !EARLY && l2_last);
      }
    }
    if constexpr (EARLY) {
      if (weight && first < rows) early_w.load(weight, lane, hidden);
    }
#pragma unroll
    for (int q = 0; q < R; ++q) {
      const int64_t row = first + q * kPass;
      if (row >= rows) continue;  // inactive lanes still take part in the reduction
      T* r = residual + row * res_stride;
#pragma unroll
      for (int k = 0; k < P; ++k) {
        if (!Row::has(lane, k, hidden)) continue;
        // Rounded to the dtype first, as the eager `residual + hidden` is.
        if constexpr (kh::cuda::kPacked2<T>) {
          using P2 = kh::cuda::Packed2<T>;
          using kh::cuda::pair;
#pragma unroll
          for (int j = 0; j < Row::N / 2; ++j) {
            pair(s[q].p[k], j) = __hadd2_rn(pair(s[q].p[k], j), pair(b[q].p[k], j));
            const float lo = P2::lo(pair(s[q].p[k], j)), hi = P2::hi(pair(s[q].p[k], j));
            sum[q] += lo * lo;
            sum[q] += hi * hi;
          }
        } else {
#pragma unroll
          for (int j = 0; j < Row::N; ++j) {
            s[q].p[k].v[j] = static_cast<T>(static_cast<A>(s[q].p[k].v[j]) + static_cast<A>(b[q].p[k].v[j]));
            sum[q] += static_cast<A>(s[q].p[k].v[j]) * static_cast<A>(s[q].p[k].v[j]);
          }
        }
        kh::cuda::store_pack(r + Row::offset(lane, k), s[q].p[k]);
      }
    }
  }
  // The row sums, then the epilogue: the same as rms_norm_cuda.cu's, written out in each, since as one
  // shared function ptxas scheduled the one-pack kernels differently (RMSNorm's bf16 16 x 1 x 2:
  // 336 -> 360 instructions).
#pragma unroll
  for (int q = 0; q < R; ++q) sum[q] = kh::cuda::row_sum<G>(sum[q]);
#pragma unroll
  for (int q = 0; q < R; ++q) {
    const int64_t row = first + q * kPass;
    if (row >= rows) return;
    const A inv = norm.inv_rms(sum[q]);
    T* x = input + row * in_stride;
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
      kh::cuda::store_normed(x + i, s[q].p[k], inv, weight ? &w : nullptr);
    }
  }
}

template <typename T, int G, bool VEC>
__global__ void fused_add_rms_norm_kernel(T* __restrict__ input, T* __restrict__ residual, const T* __restrict__ weight,
                                          int64_t rows, int64_t hidden, int64_t in_stride, int64_t res_stride,
                                          kh::cuda::RowNorm<at::opmath_type<T>> norm, bool) {
  using A = at::opmath_type<T>;
  constexpr int N = Pack<T>::N;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * (blockDim.x / G) + threadIdx.x / G;
  const int lane = threadIdx.x % G;
  const bool active = row < rows;
  T* x = input + (active ? row : 0) * in_stride;
  T* r = residual + (active ? row : 0) * res_stride;

  A sum = 0;
  if (active) {
    if constexpr (VEC) {
      for (int64_t i = int64_t(lane) * N; i < hidden; i += int64_t(G) * N) {
        const Pack<T> a = kh::cuda::load_pack(x + i), b = kh::cuda::load_pack(r + i);
        Pack<T> s;
#pragma unroll
        for (int j = 0; j < N; ++j) {
          // Rounded to the dtype first, as the eager `residual + hidden` is.
          s.v[j] = static_cast<T>(static_cast<A>(a.v[j]) + static_cast<A>(b.v[j]));
          sum += static_cast<A>(s.v[j]) * static_cast<A>(s.v[j]);
        }
        kh::cuda::store_pack(r + i, s);
      }
    } else {
      for (int64_t i = lane; i < hidden; i += G) {
        const T s = static_cast<T>(static_cast<A>(x[i]) + static_cast<A>(r[i]));
        r[i] = s;
        sum += static_cast<A>(s) * static_cast<A>(s);
      }
    }
  }
  sum = kh::cuda::group_sum<G>(sum);
  if (!active) return;
  const A inv = norm.inv_rms(sum);
  auto normed = [&](T v, const T* w) { return rms_normed(v, inv, w); };
  if constexpr (VEC) {
    for (int64_t i = int64_t(lane) * N; i < hidden; i += int64_t(G) * N) {
      const Pack<T> s = kh::cuda::load_pack(r + i);
      Pack<T> w{}, o;
      if (weight) w = kh::cuda::load_pack(weight + i);
#pragma unroll
      for (int j = 0; j < N; ++j) o.v[j] = normed(s.v[j], weight ? &w.v[j] : nullptr);
      kh::cuda::store_pack(x + i, o);
    }
  } else {
    for (int64_t i = lane; i < hidden; i += G) x[i] = normed(r[i], weight ? weight + i : nullptr);
  }
}

template <typename T>
void launch(at::Tensor& x, at::Tensor& r, const at::Tensor& w, double eps) {
  const int64_t rows = x.size(0), hidden = x.size(1);
  if (rows == 0) return;
  const T* wp = w.defined() ? w.const_data_ptr<T>() : nullptr;
  const bool vec = hidden % Pack<T>::N == 0 && kh::cuda::pack_aligned(x, {x.stride(0)}) &&
                   kh::cuda::pack_aligned(r, {r.stride(0)}) && (!wp || kh::cuda::aligned16(wp));
  const cudaStream_t stream = kh::cuda::stream_of(x);
  const int64_t packs = hidden / Pack<T>::N;
  const kh::cuda::RowNorm<at::opmath_type<T>> norm(hidden, eps);
  // x and r read once with an L2 evict-last policy in problems of more than twice the L2 (the
  // streaming kernel takes the flag and ignores it: every kernel here takes the same arguments).
  const bool l2_last = kh::cuda::keep_reads_in_l2(4 * rows * hidden * static_cast<int64_t>(sizeof(T)));
  auto go = [&](auto kernel, dim3 grid, dim3 block) {
    kernel<<<grid, block, 0, stream>>>(x.mutable_data_ptr<T>(), r.mutable_data_ptr<T>(), wp, rows, hidden, x.stride(0),
                                       r.stride(0), norm, l2_last);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  };
  // Up to 4 rows per SM: at 8, as RMSNorm takes them, it measured longer (bench/gpu/NOTES.md, "Fused
  // add + RMSNorm").
  if (vec && kh::cuda::launch_bound_rows(rows, packs, 4)) {
    kh::cuda::with_launch_bound_tile<1>(packs, rows, [&](auto g, auto p) {
      constexpr int G = decltype(g)::value, P = decltype(p)::value;
      go(fused_add_rms_norm_rows_kernel<T, G, P, true>, kh::cuda::row_blocks<G>(rows), kh::cuda::block_threads<G>());
    });
    return;
  }
  // Rows of 129-256 packs (2048 wide) whose x and r overflow L2: a row per block of 256 threads, one
  // pack each, as Liger runs them, rather than two rows per block of 128 x 2: more of DRAM's peak.
  // Where x and r stay in L2, 128 x 2 measured shorter, and at 3072-4096 wide 512 x 1 was no better
  // (bench/gpu/NOTES.md, "Fused add + RMSNorm").
  if (vec && packs > 128 && packs <= 256 && kh::cuda::exceeds_l2(2 * rows * hidden * static_cast<int64_t>(sizeof(T)))) {
    go(fused_add_rms_norm_rows_kernel<T, 256, 1>, kh::cuda::row_blocks<256>(rows), kh::cuda::block_threads<256>());
    return;
  }
  if (vec && !kh::cuda::few_rows(rows, hidden) && kh::cuda::register_row<kh::cuda::kPairRowMaxPacks>(packs)) {
    kh::cuda::with_row_tile<kh::cuda::kPairRowMaxPacks>(packs, [&](auto g, auto p) {
      constexpr int G = decltype(g)::value, P = decltype(p)::value;
      if constexpr (G * P <= kh::cuda::kNarrowRowPacks) {
        if (kh::cuda::early_loads_pay(kh::cuda::row_blocks<G>(rows))) {
          return go(fused_add_rms_norm_rows_kernel<T, G, P, true>, kh::cuda::row_blocks<G>(rows),
                    kh::cuda::block_threads<G>());
        }
      }
      // Four rows a thread (kOnePackRowTile; 61 registers): shorter than one or two
      // (bench/gpu/NOTES.md, "128-wide rows").
      if constexpr (kh::cuda::kOnePackRowTile<G, P>) {
        return go(fused_add_rms_norm_rows_kernel<T, G, P, false, 4>, kh::cuda::row_blocks<G, 4>(rows),
                  kh::cuda::block_threads<G>());
      }
      go(fused_add_rms_norm_rows_kernel<T, G, P>, kh::cuda::row_blocks<G>(rows), kh::cuda::block_threads<G>());
    });
    return;
  }
  const dim3 grid = kh::cuda::row_grid(rows, hidden), block = kh::cuda::row_block(hidden);
  if (kh::cuda::wide_rows(hidden)) {
    vec ? go(fused_add_rms_norm_kernel<T, kh::cuda::kWideGroup, true>, grid, block)
        : go(fused_add_rms_norm_kernel<T, kh::cuda::kWideGroup, false>, grid, block);
  } else {
    vec ? go(fused_add_rms_norm_kernel<T, kh::cuda::kNarrowGroup, true>, grid, block)
        : go(fused_add_rms_norm_kernel<T, kh::cuda::kNarrowGroup, false>, grid, block);
  }
}

}  // namespace

void fused_add_rms_norm(at::Tensor& input, at::Tensor& residual, const std::optional<at::Tensor>& weight, double eps) {
  kh::check_device("fused_add_rms_norm", input, true);
  const at::Tensor w = kh::check_norm_args("fused_add_rms_norm", "residual", residual, input, weight);
  const c10::cuda::CUDAGuard guard(input.device());
  kh::Output x(input, /*load=*/true, kh::rows_of);
  kh::Output res(residual, /*load=*/true, kh::rows_of);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, input.scalar_type(), "fused_add_rms_norm_cuda",
                                  [&] { launch<scalar_t>(x.get(), res.get(), w, eps); });
  x.finish();
  res.finish();
}
