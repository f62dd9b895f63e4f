// Rows held in registers, for the row-normalising kernels (rms_norm, fused_add_rms_norm, adaln).
//
// A row of `hidden` elements is split into 16-byte packs; G threads share a row and each holds up
// to P packs (pack p of lane l is pack p * G + l of the row, so a warp's loads are coalesced). All
// of a thread's loads are issued before the reduction and the row is never read from memory twice:
// the minimum traffic (one read, one write) at any size, with P * 16 bytes in flight per thread.
// Rows of up to 512 threads' worth of packs take this path (register_row); longer or unaligned rows
// take the kernels' general (streaming) path.
#pragma once

#include <type_traits>

#include "cuda_common.cuh"
#include "packed_math.cuh"

namespace kh::cuda {

constexpr int kRowBlock = 256;  // threads per block when a row needs at most 256 of them

#ifndef KH_ROW_MAX_PACKS  // a build option only for the benchmark's comparison of tile shapes
#define KH_ROW_MAX_PACKS 4
#endif
constexpr int kRowMaxPacks = KH_ROW_MAX_PACKS;
constexpr int kPairRowMaxPacks = KH_ROW_MAX_PACKS > 2 ? KH_ROW_MAX_PACKS / 2 : 2;

// Problems whose rows all fit in one wave of the streaming kernels' blocks (a block of 512 threads
// per wide row, up to `rows_per_sm` per SM) take those, unless launch_bound_rows: there the register
// kernels' four packs a thread measured slower (bench/gpu/NOTES.md, "Shared row kernels"). Larger
// problems take the register kernels (one read of each row).
inline bool few_rows(int64_t rows, int64_t hidden, int rows_per_sm = 4) {
  const int sms = device_attribute<cudaDevAttrMultiProcessorCount>(132);
  return hidden > 1024 && rows <= int64_t(rows_per_sm) * sms;
}

// Launch-bound row problems (up to rows_per_sm rows per SM, rows of 129-1024 packs) take the register
// kernels with one or two packs a thread in blocks of 256-512 threads (with_launch_bound_tile): a
// row's loads spread over all of them instead of queueing four deep, and the row's other inputs
// (weight, scale, shift) load with x. They ran shorter than the streaming kernels, and up to 8 rows
// per SM also than the register kernels' four-pack tiles, whose few blocks leave most of each SM
// idle while x is still L2-sized (bench/gpu/NOTES.md, "Shared row kernels"). Each op passes its own
// bound.
inline bool launch_bound_rows(int64_t rows, int64_t packs, int rows_per_sm) {
  return rows <= int64_t(rows_per_sm) * device_attribute<cudaDevAttrMultiProcessorCount>(132) && packs > 128 &&
         packs <= 1024;
}

// Calls f(std::integral_constant<int, G>, std::integral_constant<int, P>) for a launch-bound row of
// `packs` packs (launch_bound_rows): G x P >= packs.
// - Up to one row per SM, one row per block of 256-512 threads with one or two packs each: the
//   shortest path per row.
// - Rows of up to 512 packs may take MidP packs a thread. RMSNorm takes 2: above one row per SM
//   (128 x 2, two rows a block, or 256 x 2), half the warps, so half the per-warp instructions that
//   the SMs' schedulers issue, and the grid still fits one wave; at 257-512 packs also below it, as
//   Liger runs them. Fused add, which also holds the residual, takes 1 (two packs measured longer);
//   AdaLN takes 2 only at rows of 385-512 packs (adaln_cuda.cu).
// - Longer rows: 512 x 2 takes 38-42 registers, so 3 blocks per SM: beyond 3 rows per SM that grid
//   needs a second wave, and 256 x 4 keeps RMSNorm in one. Fused add (more registers, still 3
//   blocks) measured the same either way.
// The numbers: bench/gpu/NOTES.md, "Shared row kernels".
template <int MidP, typename F>
void with_launch_bound_tile(int64_t packs, int64_t rows, F&& f) {
  static_assert(MidP == 1 || MidP == 2);
  using std::integral_constant;
  const int64_t sms = device_attribute<cudaDevAttrMultiProcessorCount>(132);
  if constexpr (MidP == 2) {
    if (packs > 256 && packs <= 512) return f(integral_constant<int, 256>{}, integral_constant<int, 2>{});
    if (rows > sms && packs <= 256) return f(integral_constant<int, 128>{}, integral_constant<int, 2>{});
  }
  if (packs <= 256) return f(integral_constant<int, 256>{}, integral_constant<int, 1>{});
  if (packs <= 512) return f(integral_constant<int, 512>{}, integral_constant<int, 1>{});
  if (rows > 3 * sms) return f(integral_constant<int, 256>{}, integral_constant<int, 4>{});
  return f(integral_constant<int, 512>{}, integral_constant<int, 2>{});
}

// Threads per row G and packs per thread P for a row of `packs` 16-byte packs (see row_tile_for).
struct RowTile {
  int group;
  int packs_per_thread;
};

// Few threads per short row (several rows per block), up to max_packs packs per thread for long
// rows (kRowMaxPacks: see bench/gpu/NOTES.md for the measured choice). Kernels that hold two rows
// (x and the residual) take half as many, so that a thread's registers leave room for several
// blocks per SM. Each tile is one instantiation of every row kernel: with_row_tile lists them.
inline RowTile row_tile_for(int64_t packs, int max_packs) {
  if (packs <= 4) return {4, 1};
  if (packs <= 16) return {16, 1};
  if (packs <= 64) return {32, 2};
  if (max_packs >= 4 && packs <= 128) return {32, 4};
  int group = 32;
  while (int64_t(group) * max_packs < packs) group *= 2;
  return {group, max_packs};
}

// A row's 1/hidden and epsilon in the accumulation type A, converted once on the host: the mean is
// then one product in the kernel, where an fp32 division is a subroutine of about a dozen
// instructions on its fast path (measured: bench/gpu/NOTES.md, "Shared row kernels"). The
// product differs from the quotient by about an ulp, and not at all where hidden is a power of two.
template <typename A>
struct RowNorm {
  A inv_hidden;
  A eps;

  __host__ RowNorm(int64_t hidden, double epsilon)
      : inv_hidden(static_cast<A>(1.0 / static_cast<double>(hidden))), eps(static_cast<A>(epsilon)) {}
  __device__ A mean(A sum) const { return sum * inv_hidden; }
  // 1 / sqrt(mean + eps) of a row's sum of squares.
  __device__ A inv_rms(A sum_of_squares) const { return rsqrt_of(sum_of_squares * inv_hidden + eps); }
};

template <int G>
constexpr int rows_per_block() {
  return G >= kRowBlock ? 1 : kRowBlock / G;
}

template <int G>
constexpr int block_threads() {
  return G >= kRowBlock ? G : kRowBlock;
}

// Sum of `v` over the G threads of a row, for rows_per_block<G>() rows per block. Every thread of
// the block must call it; it may be called several times in a row.
template <int G, typename A>
__device__ __forceinline__ A row_sum(A v) {
  constexpr int kWarp = G < 32 ? G : 32;
#pragma unroll
  for (int offset = kWarp / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  if constexpr (G > 32) {
    constexpr int kWarpsPerRow = G / 32;
    __shared__ A partial[rows_per_block<G>() * kWarpsPerRow];
    const int warp = threadIdx.x / 32;
    if (threadIdx.x % 32 == 0) partial[warp] = v;
    __syncthreads();
    const int first = (warp / kWarpsPerRow) * kWarpsPerRow;
    v = A(0);
#pragma unroll
    for (int w = 0; w < kWarpsPerRow; ++w) v += partial[first + w];
    __syncthreads();  // the next call may overwrite partial
  }
  return v;
}

// The sums of squares of R rows of one pack a thread (the exact-row kernels), each summed over its
// row's G threads: every thread of the block must call it.
template <int G, typename A, typename T, int R>
__device__ __forceinline__ void sums_of_squares(A (&sum)[R], const Pack<T> (&x)[R]) {
#pragma unroll
  for (int r = 0; r < R; ++r) {
    sum[r] = 0;
    for_each_value<A>(x[r], [&](A v) { sum[r] += v * v; });
  }
#pragma unroll
  for (int r = 0; r < R; ++r) sum[r] = row_sum<G>(sum[r]);
}

// The packs of one row that one thread holds.
template <typename T, int G, int P>
struct RowPacks {
  static constexpr int N = Pack<T>::N;
  Pack<T> p[P];

  // Element offset of this lane's pack `k` in the row.
  __device__ static int64_t offset(int lane, int k) { return (int64_t(k) * G + lane) * N; }
  __device__ static bool has(int lane, int k, int64_t hidden) { return offset(lane, k) < hidden; }

  // l2_last: with load_pack_l2_last (keep_reads_in_l2); a uniform branch.
  __device__ void load(const T* row, int lane, int64_t hidden, bool l2_last = false) {
    if (l2_last) {
#pragma unroll
      for (int k = 0; k < P; ++k) {
        if (has(lane, k, hidden)) p[k] = load_pack_l2_last(row + offset(lane, k));
      }
    } else {
#pragma unroll
      for (int k = 0; k < P; ++k) {
        if (has(lane, k, hidden)) p[k] = load_pack(row + offset(lane, k));
      }
    }
  }
};

// Calls f(std::integral_constant<int, G>, std::integral_constant<int, P>) for the tile of a row of
// `packs` packs, where register_row<MaxP>(packs).
template <int MaxP, typename F>
void with_row_tile(int64_t packs, F&& f) {
  static_assert(MaxP == 2 || MaxP == 4 || MaxP == 8);
  using std::integral_constant;
  const RowTile t = row_tile_for(packs, MaxP);
  using P = integral_constant<int, MaxP>;
  switch (t.group) {
    case 4: return f(integral_constant<int, 4>{}, integral_constant<int, 1>{});
    case 16: return f(integral_constant<int, 16>{}, integral_constant<int, 1>{});
    case 32:
      if (t.packs_per_thread == 2) return f(integral_constant<int, 32>{}, integral_constant<int, 2>{});
      if constexpr (MaxP > 2) {  // row_tile_for gives 32 x 4 only then
        if (t.packs_per_thread == 4) return f(integral_constant<int, 32>{}, integral_constant<int, 4>{});
      }
      return f(integral_constant<int, 32>{}, P{});
    case 64: return f(integral_constant<int, 64>{}, P{});
    case 128: return f(integral_constant<int, 128>{}, P{});
    case 256: return f(integral_constant<int, 256>{}, P{});
    default: return f(integral_constant<int, 512>{}, P{});
  }
}

// For bandwidth-bound rows (x and the output overflow L2): G threads of P = 5 or 6 packs that hold
// the row exactly, {0, 0} where none does (rows of 4 x G packs already fit row_tile_for exactly).
// Bytes in flight per SM set the bandwidth, and a partly empty last pack spends registers without
// adding any: at 5120 wide (640 packs) G = 256 x P = 4 holds 2.5 packs a thread, 128 x 5 exactly 5,
// more bytes in flight per SM. Where x stays in L2 the regular tiles measured faster
// (bench/gpu/NOTES.md, "AdaLN").
inline RowTile full_row_tile(int64_t packs) {
  for (int p : {5, 6}) {
    for (int g = 32; g <= kRowBlock; g *= 2) {
      if (int64_t(g) * p == packs) return {g, p};
    }
  }
  return {0, 0};
}

// Calls f(std::integral_constant<int, G>, std::integral_constant<int, P>) for a tile of full_row_tile.
template <typename F>
void with_full_row_tile(RowTile t, F&& f) {
  using std::integral_constant;
  auto with_p = [&](auto g) {
    return t.packs_per_thread == 5 ? f(g, integral_constant<int, 5>{}) : f(g, integral_constant<int, 6>{});
  };
  switch (t.group) {
    case 32: return with_p(integral_constant<int, 32>{});
    case 64: return with_p(integral_constant<int, 64>{});
    case 128: return with_p(integral_constant<int, 128>{});
    default: return with_p(integral_constant<int, 256>{});
  }
}

// Whether a row of `packs` packs takes the register path with at most MaxP packs per thread.
template <int MaxP>
inline bool register_row(int64_t packs) {
  return packs <= int64_t(512) * MaxP;
}

// Blocks of `block_rows` rows each that cover `rows`.
inline unsigned blocks_for_rows(int64_t rows, int64_t block_rows) {
  return static_cast<unsigned>((rows + block_rows - 1) / block_rows);
}

// Blocks of a row kernel whose threads each hold R rows (R x rows_per_block<G>() rows a block).
template <int G, int R = 1>
inline unsigned row_blocks(int64_t rows) {
  return blocks_for_rows(rows, int64_t(rows_per_block<G>()) * R);
}

// The tile of rows of 9-16 packs (128 bf16 elements: Qwen3's per-head q and k norms), one pack a
// thread: there a row's fixed work (its address, the four-step shuffle reduction, the rsqrt) is as
// long as its arithmetic, and at grids past early_loads_pay the kernels hold several rows a thread
// (each op's R), all their loads issued before the first reduction, as inductor's and Liger's
// kernels for these rows do (two to eight rows a thread). Measured per op (bench/gpu/NOTES.md,
// "128-wide rows").
template <int G, int P>
constexpr bool kOnePackRowTile = G == 16 && P == 1;

#ifndef KH_EXACT_ROWS  // a build option only for the benchmark's comparison
#define KH_EXACT_ROWS 2
#endif
// Rows a thread of the kernels for rows of exactly kOnePackRowTile's 16 packs.
constexpr int kExactRows = KH_EXACT_ROWS;

#ifndef KH_EXACT_ROW_BLOCK  // a build option only for the benchmark's comparison
#define KH_EXACT_ROW_BLOCK 128
#endif
// Threads a block of those kernels: 128 rather than kRowBlock's 256, so that the grid's last wave
// ends in finer steps (bench/gpu/NOTES.md, "128-wide rows").
constexpr int kExactRowBlock = KH_EXACT_ROW_BLOCK;

// Rows a block of the exact-row kernels: R rows a thread, G threads a row.
template <int G, int R>
constexpr int exact_block_rows() {
  static_assert(G <= 32 && kExactRowBlock % G == 0);
  return kExactRowBlock / G * R;
}

template <int G, int R>
inline unsigned exact_row_blocks(int64_t rows) {
  return blocks_for_rows(rows, exact_block_rows<G, R>());
}

// Whether a grid of `blocks` row blocks should load the row's other inputs (weight, scale, shift)
// with x, before the reduction (the kernels' EARLY): with up to two blocks per SM the second memory
// round trip is on every block's critical path, and occupancy, which the early packs' registers
// cost, does not limit the grid.
inline bool early_loads_pay(unsigned blocks) {
  return blocks <= 2u * static_cast<unsigned>(device_attribute<cudaDevAttrMultiProcessorCount>(132));
}

// Row tiles of up to kNarrowRowPacks packs (rows of up to 1024 bf16 elements): the tiles that are
// also instantiated with EARLY loads, for the few-row grids of early_loads_pay (bench/gpu/NOTES.md,
// "Shared row kernels").
// Longer rows with few of them take with_launch_bound_tile, which loads early anyway.
constexpr int kNarrowRowPacks = 128;

}  // namespace kh::cuda
