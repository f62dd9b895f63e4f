// AdaLN on CUDA: out = norm(x) * (1 + scale) + shift, a group of threads per row (see
// rms_norm_cuda.cu: rows that fit stay in registers, one read of x), fp32 statistics, each step
// rounded to the dtype where diffusers' eager code rounds. scale/shift rows come from their own
// strides (0 where they broadcast: then they stay in L1/L2).
#include <ATen/Dispatch.h>

#include <algorithm>
#include <optional>
#include <type_traits>

#include "../common/adaln_args.h"
#include "../common/cuda_common.cuh"
#include "../common/numerics.h"
#include "../common/packed_math.cuh"
#include "../common/row_registers.cuh"
#include "../common/views.h"
#include "torch_binding.h"

#ifndef KH_ADALN_TWO_PACK_MIN_ROWS  // a build option only for the benchmark's comparison
#define KH_ADALN_TWO_PACK_MIN_ROWS 33
#endif
#ifndef KH_ADALN_STREAM_OUT  // a build option only for the benchmark's comparison: 0, plain stores at every size
#define KH_ADALN_STREAM_OUT 1
#endif

namespace {

using kh::cuda::block_threads;
using kh::cuda::Pack;

// Launch-bound rows of 257-384 packs (3072 wide in bf16) take two packs a thread from this many rows
// (see the launch).
constexpr int64_t kTwoPackMinRows = KH_ADALN_TWO_PACK_MIN_ROWS;

// Rows of 257-512 packs (3072-4096 wide in bf16) take two packs a thread past the launch-bound
// sizes from this many rows (see the launch).
constexpr int64_t kTwoPackLongRowMinRows = 2048;

// Whether `rows` of `packs` packs past the launch-bound sizes take two packs a thread rather than
// kRowMaxPacks: rows of 129-512 packs (2048-4096 wide in bf16) where x and the output, `bytes`,
// are at most 1.5 times the L2 (see the launch).
bool two_pack_rows_near_l2(int64_t packs, int64_t rows, int64_t bytes) {
  return packs > 128 && packs <= 512 && (packs <= 256 || rows >= kTwoPackLongRowMinRows) &&
         !kh::cuda::exceeds_l2(bytes / 3 * 2);
}

// A [B, S, H] tensor by its strides (the last one is 1); I: the strides' type, 32 bits where every
// element's offset fits (fits_int32).
template <typename I = int64_t>
struct Bsh {
  const void* data;
  I sb, ss;
  // Element `i` of row (b, s); the offset summed in I first (one wide multiply-add for the address).
  template <typename T>
  __device__ const T* row(I b, I s, I i = 0) const {
    return static_cast<const T*>(data) + (b * sb + s * ss + i);
  }
};

template <typename T, typename A>
__device__ __forceinline__ T modulated(T xv, A mean, A inv, const T* w, T sc, T sh, bool layer_norm) {
  A n = (static_cast<A>(xv) - mean) * inv;
  // LayerNorm applies its weight before its one rounding; diffusers' RMSNorm rounds, then multiplies.
  if (w) n = layer_norm ? n * static_cast<A>(*w) : kh::round_to<T>(n) * static_cast<A>(*w);
  n = kh::round_to<T>(n);
  const A a = kh::round_to<T>(A(1) + static_cast<A>(sc));
  const A p = kh::round_to<T>(kh::mul_rn(n, a));
  return static_cast<T>(p + static_cast<A>(sh));
}

// modulated() over a pack (w: the weight's pack where has_weight). fp16/bf16 two elements at a time,
// with the same roundings (packed_math.cuh).
template <typename T, typename A>
__device__ __forceinline__ void modulate_pack(Pack<T>& o, const Pack<T>& xp, A mean, A inv, bool has_weight,
                                              const Pack<T>& w, const Pack<T>& scp, const Pack<T>& shp,
                                              bool layer_norm) {
  if constexpr (kh::cuda::kPacked2<T>) {
    using P2 = kh::cuda::Packed2<T>;
    using kh::cuda::pair;
#pragma unroll
    for (int j = 0; j < Pack<T>::N / 2; ++j) {
      float n0 = (P2::lo(pair(xp, j)) - mean) * inv, n1 = (P2::hi(pair(xp, j)) - mean) * inv;
      if (has_weight && layer_norm) {
        n0 *= P2::lo(pair(w, j));
        n1 *= P2::hi(pair(w, j));
      }
      typename P2::type n = P2::round(n0, n1);
      if (has_weight && !layer_norm) n = __hmul2_rn(n, pair(w, j));
      const typename P2::type a = __hadd2_rn(P2::one(), pair(scp, j));
      pair(o, j) = __hadd2_rn(__hmul2_rn(n, a), pair(shp, j));
    }
  } else {
#pragma unroll
    for (int j = 0; j < Pack<T>::N; ++j)
      o.v[j] = modulated(xp.v[j], mean, inv, has_weight ? &w.v[j] : nullptr, scp.v[j], shp.v[j], layer_norm);
  }
}

// EARLY: the scale/shift packs are loaded with x, before the reduction: one memory round trip
// instead of two, for grids of up to two blocks per SM, where the second trip is on every block's
// critical path. Else after it: with more blocks, their registers cost more occupancy than the
// round trip (measured a loss at large sizes).
//
// PLAIN_RMS: RMS statistics and no weight known at compile time (diffusers' AdaLN norms,
// elementwise_affine=False), for the bandwidth-bound tiles: without the registers that LayerNorm's
// mean and the weight's packs hold, the kernel fits 40 registers, so six blocks of 256 threads share
// an SM instead of five, with more of x in flight (at 32 registers it spills). Also for the one-pack
// tile of 128-wide rows (kOnePackRowTile) at many rows, where the generic kernel's branches are much
// of a thread's work. The launch-bound tiles have their own kernel (adaln_rms_row_block_kernel).
// The measurements behind these choices, here and below: bench/gpu/NOTES.md.
constexpr int kPlainRmsThreadsPerSm = 1536;

// MIN_BLOCKS of adaln_rows_kernel. 0: no minimum (an explicit 1 made ptxas take more registers).
template <int G, bool EARLY, bool PLAIN_RMS>
constexpr int adaln_min_blocks() {
  return PLAIN_RMS && !EARLY ? kPlainRmsThreadsPerSm / block_threads<G>() : 0;
}

// The tile of rows of 257-384 packs (2560-3072 wide in bf16) past 1.5 times the L2, compiled for RMS
// without a weight alone: three packs a thread fill every pack at 3072 wide and 5 of 6 at 2560, and
// at 40 registers six blocks share an SM, where full_row_tile's 64 x 5 and 64 x 6 in the general
// kernel hold 54-57 registers and four blocks an SM.
template <int G, int P>
constexpr bool kRmsOnlyTile = G == 128 && P == 3;

template <typename T, int G, int P, bool EARLY, bool PLAIN_RMS = false,
          int MIN_BLOCKS = adaln_min_blocks<G, EARLY, PLAIN_RMS>()>
__global__ __launch_bounds__(block_threads<G>(), MIN_BLOCKS) void adaln_rows_kernel(
    T* __restrict__ out, int64_t out_sb, int64_t out_ss, Bsh<> x_, Bsh<> scale_, Bsh<> shift_,
    const T* __restrict__ weight_or_null, int64_t rows, int64_t seq, int64_t hidden,
    kh::cuda::RowNorm<at::opmath_type<T>> norm, bool layer_norm_or_rms, int64_t x_row_stride, bool stream_out,
    bool x_l2_last) {
  using A = at::opmath_type<T>;
  const T* __restrict__ weight = PLAIN_RMS ? nullptr : weight_or_null;
  const bool layer_norm = !PLAIN_RMS && layer_norm_or_rms;
  using Row = kh::cuda::RowPacks<T, G, P>;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kh::cuda::rows_per_block<G>() + threadIdx.x / G;
  const int lane = threadIdx.x % G;
  const bool active = row < rows;
  const int64_t r = active ? row : 0;
  Row x;
  // Where [B, S] folds into rows (always for a contiguous x), the row's address needs no division:
  // the loads go out first, the (batch, position) split for scale and shift runs under them.
  if (active) {
    x.load(x_row_stride >= 0 ? static_cast<const T*>(x_.data) + r * x_row_stride : x_.row<T>(r / seq, r % seq), lane,
           hidden, !EARLY && x_l2_last);
  }
  int64_t b, s;
  if (seq >= rows) {  // one sample: no division
    b = 0;
    s = r;
  } else if (rows <= INT32_MAX) {
    b = static_cast<uint32_t>(r) / static_cast<uint32_t>(seq);
    s = r - b * seq;
  } else {
    b = r / seq;
    s = r - b * seq;
  }
  const T* sc = scale_.row<T>(b, s);
  const T* sh = shift_.row<T>(b, s);
  [[maybe_unused]] Pack<T> early_sc[EARLY ? P : 1], early_sh[EARLY ? P : 1];
  if constexpr (EARLY) {
    if (active) {
#pragma unroll
      for (int k = 0; k < P; ++k) {
        if (!Row::has(lane, k, hidden)) continue;
        early_sc[k] = kh::cuda::load_pack_keep(sc + Row::offset(lane, k));
        early_sh[k] = kh::cuda::load_pack_keep(sh + Row::offset(lane, k));
      }
    }
  }
  auto sum_of = [&](auto f) {
    A acc = 0;
    if (active) {
#pragma unroll
      for (int k = 0; k < P; ++k) {
        if (Row::has(lane, k, hidden)) kh::cuda::for_each_value<A>(x.p[k], [&](A v) { acc += f(v); });
      }
    }
    return kh::cuda::row_sum<G>(acc);
  };
  const A mean = layer_norm ? norm.mean(sum_of([](A v) { return v; })) : A(0);
  const A sq = sum_of([mean](A v) { return (v - mean) * (v - mean); });
  if (!active) return;
  const A inv = norm.inv_rms(sq);
  T* y = out + b * out_sb + s * out_ss;
#pragma unroll
  for (int k = 0; k < P; ++k) {
    if (!Row::has(lane, k, hidden)) continue;
    const int64_t i = Row::offset(lane, k);
    // Per-sample modulation (stride 0 over the sequence): every row re-reads scale and shift, so keep
    // them in L1. Per-token rows are read once (the hint's effect there was not measured).
    Pack<T> scp, shp;
    if constexpr (EARLY) {
      scp = early_sc[k];
      shp = early_sh[k];
    } else {
      scp = kh::cuda::load_pack_keep(sc + i);
      shp = kh::cuda::load_pack_keep(sh + i);
    }
    Pack<T> w{}, o;
    if (weight) w = kh::cuda::load_pack_keep(weight + i);
    modulate_pack(o, x.p[k], mean, inv, weight != nullptr, w, scp, shp, layer_norm);
    kh::cuda::store_pack_hinted(y + i, o, stream_out);
  }
}

// adaln_rows_kernel's tiles of a row per block, EARLY, for diffusers' RMSNorm without weight where
// x's and the output's rows are each one stride apart. At the launch-bound sizes that take them every
// warp of the SM runs the whole kernel, so each instruction on its path costs the SM's schedulers 4
// issue slots: no LayerNorm or weight branches, 32-bit row and element indices, (batch, position) by
// a multiply-shift divider, no stride branch.
template <typename T, int G, int P>
__global__ __launch_bounds__(block_threads<G>()) void adaln_rms_row_block_kernel(
    T* __restrict__ out, int64_t out_row_stride, const T* __restrict__ x, int64_t x_row_stride, Bsh<> scale_,
    Bsh<> shift_, kh::cuda::Divider<uint32_t> seq, uint32_t rows, int hidden, kh::cuda::RowNorm<float> norm,
    bool stream_out) {
  static_assert(G >= kh::cuda::kRowBlock, "one row per block: the early return is the whole block's");
  constexpr int N = Pack<T>::N;
  const uint32_t row = blockIdx.x;
  if (row >= rows) return;
  const int lane = threadIdx.x;
  auto has = [&](int k) { return (k * G + lane) * N < hidden; };
  auto at = [&](int k) { return (k * G + lane) * N; };
  const T* xr = x + row * x_row_stride;
  Pack<T> xp[P], scp[P], shp[P];
#pragma unroll
  for (int k = 0; k < P; ++k) {
    if (has(k)) xp[k] = kh::cuda::load_pack(xr + at(k));
  }
  const auto bs = seq.divmod(row);
  const T* sc = scale_.row<T>(bs.div, bs.mod);
  const T* sh = shift_.row<T>(bs.div, bs.mod);
#pragma unroll
  for (int k = 0; k < P; ++k) {
    if (!has(k)) continue;
    scp[k] = kh::cuda::load_pack_keep(sc + at(k));
    shp[k] = kh::cuda::load_pack_keep(sh + at(k));
  }
  float acc = 0;
#pragma unroll
  for (int k = 0; k < P; ++k) {
    if (has(k)) kh::cuda::for_each_value<float>(xp[k], [&](float v) { acc += v * v; });
  }
  const float inv = norm.inv_rms(kh::cuda::row_sum<G>(acc));
  T* y = out + row * out_row_stride;
#pragma unroll
  for (int k = 0; k < P; ++k) {
    if (has(k)) {
      Pack<T> o;
      modulate_pack(o, xp[k], 0.0f, inv, /*has_weight=*/false, /*w, unread=*/xp[k], scp[k], shp[k], false);
      kh::cuda::store_pack_hinted(y + at(k), o, stream_out);
    }
  }
}

// adaln_rms_row_block_kernel's counterpart for rows of exactly G packs, one pack a thread, R rows a
// thread: kOnePackRowTile's rows of 16 packs (128 bf16/fp16 elements) at grids past
// early_loads_pay, where a row's fixed work (its address, (batch, position), the shuffles, the
// rsqrt) is as long as its arithmetic. As rms_norm_cuda.cu's rms_norm_exact_rows_kernel: no
// per-pack guard, plain loads of x (the launch leaves grids that keep_reads_in_l2 to
// adaln_rows_kernel), 32-bit offsets (rows from the block's first, scale and shift rows by
// Bsh<int>). Scale and shift load after the reduction (loaded with x they ran longer), every row's
// before the first store.
template <typename T, int G, int R>
__global__ __launch_bounds__(kh::cuda::kExactRowBlock) void adaln_rms_exact_rows_kernel(
    T* __restrict__ out, int out_row_stride, const T* __restrict__ x, int x_row_stride, Bsh<int> scale_,
    Bsh<int> shift_, kh::cuda::Divider<uint32_t> seq, uint32_t rows, kh::cuda::RowNorm<float> norm, bool stream_out) {
  constexpr int kBlockRows = kh::cuda::exact_block_rows<G, R>(), kPass = kBlockRows / R;
  const uint32_t block_first = blockIdx.x * kBlockRows;
  const int last = rows - block_first < kBlockRows ? static_cast<int>(rows - block_first) - 1 : kBlockRows - 1;
  const int local = threadIdx.x / G, lane_offset = (threadIdx.x % G) * Pack<T>::N;
  x = kh::cuda::opaque_pointer(x + static_cast<int64_t>(block_first) * x_row_stride);
  out = kh::cuda::opaque_pointer(out + static_cast<int64_t>(block_first) * out_row_stride);
  // Rows past the last one (the last block's) read the last row instead of branching: a row's G
  // lanes are all past it or none, so the sums they shuffle are never stored.
  auto row = [&](int r) { return min(local + r * kPass, last); };
  Pack<T> xp[R], scp[R], shp[R];
#pragma unroll
  for (int r = 0; r < R; ++r) xp[r] = kh::cuda::load_pack_nc(x + (row(r) * x_row_stride + lane_offset));
  float sum[R];
  kh::cuda::sums_of_squares<G>(sum, xp);
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const auto bs = seq.divmod(block_first + row(r));
    const int b = static_cast<int>(bs.div), s = static_cast<int>(bs.mod);
    scp[r] = kh::cuda::load_pack_keep(scale_.row<T>(b, s, lane_offset));
    shp[r] = kh::cuda::load_pack_keep(shift_.row<T>(b, s, lane_offset));
  }
#pragma unroll
  for (int r = 0; r < R; ++r) {
    if (local + r * kPass > last) return;
    Pack<T> o;
    modulate_pack(o, xp[r], 0.0f, norm.inv_rms(sum[r]), /*has_weight=*/false, /*w, unread=*/xp[r], scp[r], shp[r],
                  false);
    kh::cuda::store_pack_hinted(out + ((local + r * kPass) * out_row_stride + lane_offset), o, stream_out);
  }
}

template <typename T, int G, bool VEC>
__global__ void adaln_kernel(T* __restrict__ out, int64_t out_sb, int64_t out_ss, Bsh<> x_, Bsh<> scale_, Bsh<> shift_,
                             const T* __restrict__ weight, int64_t rows, int64_t seq, int64_t hidden,
                             kh::cuda::RowNorm<at::opmath_type<T>> norm, bool layer_norm) {
  using A = at::opmath_type<T>;
  constexpr int N = Pack<T>::N;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * (blockDim.x / G) + threadIdx.x / G;
  const int lane = threadIdx.x % G;
  const bool active = row < rows;
  const int64_t b = active ? row / seq : 0, s = active ? row % seq : 0;
  const T* x = x_.row<T>(b, s);

  // Row sums of x (LayerNorm's mean) and of (x - mean)^2, over this thread's elements.
  auto row_sum = [&](auto f) {
    A acc = 0;
    if (active) {
      if constexpr (VEC) {
        for (int64_t i = int64_t(lane) * N; i < hidden; i += int64_t(G) * N) {
          const Pack<T> p = kh::cuda::load_pack(x + i);
#pragma unroll
          for (int j = 0; j < N; ++j) acc += f(static_cast<A>(p.v[j]));
        }
      } else {
        for (int64_t i = lane; i < hidden; i += G) acc += f(static_cast<A>(x[i]));
      }
    }
    return kh::cuda::group_sum<G>(acc);
  };
  const A mean = layer_norm ? norm.mean(row_sum([](A v) { return v; })) : A(0);
  const A sq = row_sum([mean](A v) { return (v - mean) * (v - mean); });
  if (!active) return;
  const A inv = norm.inv_rms(sq);

  auto modulate = [&](T xv, const T* w, T sc, T sh) { return modulated(xv, mean, inv, w, sc, sh, layer_norm); };
  const T* sc = scale_.row<T>(b, s);
  const T* sh = shift_.row<T>(b, s);
  T* y = out + b * out_sb + s * out_ss;
  if constexpr (VEC) {
    for (int64_t i = int64_t(lane) * N; i < hidden; i += int64_t(G) * N) {
      const Pack<T> xp = kh::cuda::load_pack(x + i), scp = kh::cuda::load_pack(sc + i),
                    shp = kh::cuda::load_pack(sh + i);
      Pack<T> w{}, o;
      if (weight) w = kh::cuda::load_pack(weight + i);
#pragma unroll
      for (int j = 0; j < N; ++j) o.v[j] = modulate(xp.v[j], weight ? &w.v[j] : nullptr, scp.v[j], shp.v[j]);
      kh::cuda::store_pack(y + i, o);
    }
  } else {
    for (int64_t i = lane; i < hidden; i += G) y[i] = modulate(x[i], weight ? weight + i : nullptr, sc[i], sh[i]);
  }
}

#ifndef KH_ADALN_KERNELS_ONLY  // (see adaln below)
Bsh<> bsh(const at::Tensor& t) {
  return {t.const_data_ptr(), t.stride(0), t.stride(1)};
}

// Whether every element of [B, S, H] view `t` is at a 32-bit offset (Bsh<int>).
bool fits_int32(const at::Tensor& t) {
  return kh::last_element_offset(t) <= INT32_MAX;
}

Bsh<int> bsh32(const at::Tensor& t) {
  return {t.const_data_ptr(), static_cast<int>(t.stride(0)), static_cast<int>(t.stride(1))};
}
#endif

}  // namespace

#ifndef KH_ADALN_KERNELS_ONLY  // defined by bench/gpu/adaln_shapes_probe.cu, which times the kernels above
void adaln(at::Tensor& out, const at::Tensor& input, const std::optional<at::Tensor>& weight, const at::Tensor& scale,
           const at::Tensor& shift, double eps, bool layer_norm) {
  kh::check_device("adaln", input, true);
  const at::Tensor w = kh::check_adaln_args(out, input, weight);
  const c10::cuda::CUDAGuard guard(input.device());
  const at::Tensor x = kh::input_view(kh::as_bsh(input), kh::last_contiguous_of);
  const at::Tensor sc = kh::modulation_view("scale", scale, x), sh = kh::modulation_view("shift", shift, x);
  at::Tensor out3 = kh::as_bsh(out);
  kh::Output y(out3, false, kh::last_contiguous_of);
  const int64_t rows = x.size(0) * x.size(1), seq = x.size(1), hidden = x.size(2);
  if (rows == 0) return;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, input.scalar_type(), "adaln_cuda", [&] {
    at::Tensor& yo = y.get();
    const scalar_t* wp = w.defined() ? w.const_data_ptr<scalar_t>() : nullptr;
    const bool vec = hidden % Pack<scalar_t>::N == 0 && kh::cuda::pack_aligned(x, {x.stride(0), x.stride(1)}) &&
                     kh::cuda::pack_aligned(yo, {yo.stride(0), yo.stride(1)}) &&
                     kh::cuda::pack_aligned(sc, {sc.stride(0), sc.stride(1)}) &&
                     kh::cuda::pack_aligned(sh, {sh.stride(0), sh.stride(1)}) && (!wp || kh::cuda::aligned16(wp));
    // The stride from row to row where [B, S] folds into rows (always for a contiguous tensor), else -1.
    auto row_stride = [](const at::Tensor& t) {
      return t.size(0) == 1 || t.stride(0) == t.size(1) * t.stride(1) ? t.stride(1) : int64_t(-1);
    };
    const int64_t x_row_stride = row_stride(x), out_row_stride = row_stride(yo);
    // Where x and the output overflow L2, plain stores would evict the scale and shift rows.
    const int64_t bytes = 2 * rows * hidden * static_cast<int64_t>(sizeof(scalar_t));
    const bool over_l2 = kh::cuda::exceeds_l2(bytes), x_l2_last = kh::cuda::keep_reads_in_l2(bytes);
    const bool stream_out = KH_ADALN_STREAM_OUT && over_l2;
    // Tile G x P, its modulation loaded before the reduction or after it.
    const bool plain_rms = !layer_norm && !wp;
    const kh::cuda::RowNorm<at::opmath_type<scalar_t>> norm(hidden, eps);
    const int64_t packs = hidden / Pack<scalar_t>::N;
    auto rows_kernel = [&](auto g, auto p, auto early) {
      constexpr int G = decltype(g)::value, P = decltype(p)::value;
      constexpr bool EARLY = decltype(early)::value;
      const unsigned blocks = kh::cuda::row_blocks<G>(rows);
      const cudaStream_t stream = kh::cuda::stream_of(input);
      // Specialised for diffusers' RMSNorm without weight: the launch-bound tiles of a row per block
      // (where the rows are each one stride apart), and the four-pack and 128-wide tiles that many
      // blocks share an SM with (the bandwidth-bound sizes). Elsewhere neither issue nor occupancy
      // limits them, and each one is a compile. Not for double, whose packs do not fit 40 registers
      // (32 bytes spilled) and which no model runs.
      constexpr bool kFloatingPoint = !std::is_same_v<scalar_t, double>;
      if constexpr (EARLY && G >= kh::cuda::kRowBlock && kFloatingPoint) {
        if (plain_rms && x_row_stride >= 0 && out_row_stride >= 0 && rows <= INT32_MAX) {
          adaln_rms_row_block_kernel<scalar_t, G, P><<<blocks, kh::cuda::block_threads<G>(), 0, stream>>>(
              yo.mutable_data_ptr<scalar_t>(), out_row_stride, x.const_data_ptr<scalar_t>(), x_row_stride, bsh(sc),
              bsh(sh), kh::cuda::Divider<uint32_t>(static_cast<uint32_t>(seq)), static_cast<uint32_t>(rows),
              static_cast<int>(hidden), norm, stream_out);  // (kFloatingPoint: opmath is float)
          return;
        }
      }
      if constexpr (!EARLY && kh::cuda::kOnePackRowTile<G, P> && kFloatingPoint) {
        constexpr int R = kh::cuda::kExactRows;
        if (plain_rms && packs == G * P && x_row_stride >= 0 && out_row_stride >= 0 && rows <= INT32_MAX &&
            !x_l2_last && fits_int32(sc) && fits_int32(sh) &&
            std::max(x_row_stride, out_row_stride) * kh::cuda::exact_block_rows<G, R>() <= INT32_MAX) {
          adaln_rms_exact_rows_kernel<scalar_t, G, R>
              <<<kh::cuda::exact_row_blocks<G, R>(rows), kh::cuda::kExactRowBlock, 0, stream>>>(
                  yo.mutable_data_ptr<scalar_t>(), static_cast<int>(out_row_stride), x.const_data_ptr<scalar_t>(),
                  static_cast<int>(x_row_stride), bsh32(sc), bsh32(sh),
                  kh::cuda::Divider<uint32_t>(static_cast<uint32_t>(seq)), static_cast<uint32_t>(rows), norm,
                  stream_out);
          return;
        }
      }
      auto kernel = adaln_rows_kernel<scalar_t, G, P, EARLY, kRmsOnlyTile<G, P>>;
      constexpr bool kPlainRmsTile =
          P == kh::cuda::kRowMaxPacks || kh::cuda::kOnePackRowTile<G, P> || (P == 2 && G >= 128);
      if constexpr (!EARLY && kPlainRmsTile && kFloatingPoint) {
        if (plain_rms) kernel = adaln_rows_kernel<scalar_t, G, P, EARLY, true>;
      }
      kernel<<<blocks, kh::cuda::block_threads<G>(), 0, stream>>>(
          yo.mutable_data_ptr<scalar_t>(), yo.stride(0), yo.stride(1), bsh(x), bsh(sc), bsh(sh), wp, rows, seq, hidden,
          norm, layer_norm, x_row_stride, stream_out, x_l2_last);
    };
    // Early modulation loads for grids of up to two blocks per SM; with four or more their registers
    // cost occupancy.
    auto rows_kernel_early_where_few = [&](auto g, auto p) {
      constexpr int G = decltype(g)::value;
      kh::cuda::early_loads_pay(kh::cuda::row_blocks<G>(rows)) ? rows_kernel(g, p, std::true_type{})
                                                               : rows_kernel(g, p, std::false_type{});
    };
    // Launch-bound tiles up to 8 rows per SM; rows of 257-511 packs (3072 wide, where one pack a
    // thread in 512 threads leaves a quarter of them idle) up to 4, above which the register tiles
    // measured shorter. Rows of up to 256 packs (2048 wide) up to 32 per SM, as Liger runs them (a row
    // per block of 256 threads, one pack each): the 64 x 4 tile's 1024 blocks at 4096 rows fill 1.3
    // waves of 6 blocks per SM, 4096 blocks of 256 x 1 four waves of 8.
    const int launch_bound_rows_per_sm = packs <= 256 ? 32 : packs < 512 ? 4 : 8;
    if (vec && kh::cuda::launch_bound_rows(rows, packs, launch_bound_rows_per_sm)) {
      auto early = [&](auto g, auto p) { rows_kernel(g, p, std::true_type{}); };
      auto early_long_rows = [&](auto g, auto p) {  // (128 x 2 is for rows of up to 256 packs: not taken)
        if constexpr (decltype(g)::value * decltype(p)::value > 256) early(g, p);
      };
      // Two packs a thread (256 x 2) where they fill more than 3/4 of the tile (4096 wide; at 3072 wide
      // above one row per SM it was mixed), also at up to one row per SM; and at 3072 wide from
      // kTwoPackMinRows rows up to one row per SM, as Liger runs them (fewer rows measured longer).
      const bool two_packs = packs > 384 || (packs > 256 && rows >= kTwoPackMinRows &&
                                             rows <= kh::cuda::device_attribute<cudaDevAttrMultiProcessorCount>(132));
      two_packs ? kh::cuda::with_launch_bound_tile<2>(packs, rows, early_long_rows)
                : kh::cuda::with_launch_bound_tile<1>(packs, rows, early);
      C10_CUDA_KERNEL_LAUNCH_CHECK();
      return;
    }
    // Above that the register kernel at every row count too, unlike RMSNorm (few_rows): with its
    // modulation loaded early, four packs a thread, it ran shorter than the streaming kernel at 1-128
    // rows.
    if (vec && kh::cuda::register_row<kh::cuda::kRowMaxPacks>(packs)) {
      const kh::cuda::RowTile full = kh::cuda::full_row_tile(packs);
      if (two_pack_rows_near_l2(packs, rows, bytes)) {
        // A row a block of 256 threads with two packs each (Liger's tile; 128 x 2, two rows a block,
        // at up to 256 packs) where x and the output about fit the L2: shorter than the four-pack
        // tiles there; below 2048 rows of 3072-4096 (kTwoPackLongRowMinRows) mixed or longer, and
        // longer past 1.5 times the L2.
        // (with_row_tile<2>'s tiles for these packs, without compiling its other tiles as well)
        auto late = [&](auto g) { rows_kernel(g, std::integral_constant<int, 2>{}, std::false_type{}); };
        packs <= 256 ? late(std::integral_constant<int, 128>{}) : late(std::integral_constant<int, 256>{});
      } else if (over_l2 && full.group > 0) {
        // Modulation after the reduction: grids this large are far over two blocks per SM. RMS
        // without a weight at 2560-3072 wide in bf16/fp16: kRmsOnlyTile. (A generic lambda whose
        // launch depends on its arguments: its discarded branch then compiles no kernel for fp32/fp64.)
        auto rms_only_tile = [&](auto packed2, auto g, auto p) {
          if constexpr (decltype(packed2)::value) {
            if (plain_rms && packs > 256 && packs <= 384) {
              rows_kernel(g, p, std::false_type{});
              return true;
            }
          }
          return false;
        };
        if (!rms_only_tile(std::bool_constant<kh::cuda::kPacked2<scalar_t>>{}, std::integral_constant<int, 128>{},
                           std::integral_constant<int, 3>{})) {
          kh::cuda::with_full_row_tile(full, [&](auto g, auto p) { rows_kernel(g, p, std::false_type{}); });
        }
      } else {
        kh::cuda::with_row_tile<kh::cuda::kRowMaxPacks>(packs, rows_kernel_early_where_few);
      }
      C10_CUDA_KERNEL_LAUNCH_CHECK();
      return;
    }
    const dim3 grid = kh::cuda::row_grid(rows, hidden), block = kh::cuda::row_block(hidden);
    auto go = [&](auto kernel) {
      kernel<<<grid, block, 0, kh::cuda::stream_of(input)>>>(yo.mutable_data_ptr<scalar_t>(), yo.stride(0),
                                                             yo.stride(1), bsh(x), bsh(sc), bsh(sh), wp, rows, seq,
                                                             hidden, norm, layer_norm);
    };
    if (kh::cuda::wide_rows(hidden)) {
      vec ? go(adaln_kernel<scalar_t, kh::cuda::kWideGroup, true>)
          : go(adaln_kernel<scalar_t, kh::cuda::kWideGroup, false>);
    } else {
      vec ? go(adaln_kernel<scalar_t, kh::cuda::kNarrowGroup, true>)
          : go(adaln_kernel<scalar_t, kh::cuda::kNarrowGroup, false>);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
  y.finish();
}
#endif  // KH_ADALN_KERNELS_ONLY
