// transformers' apply_rotary_pos_emb on CUDA, with the roundings of eager q * cos + rotate_half(q) * sin.
// Where the halves of a head split into 16-byte packs (head_dim 128: 8 packs a half), a thread
// rotates one pack of the first half with the matching pack of the second: 16-byte loads and stores
// of q, k, cos and sin. From 64 tokens a block per token (the token kernel); below, or where its
// limits do not hold, a flat grid of (token, heads, pack) items. Without 16-byte packs, one block per
// token, its threads over the (head, pair) items of q and then k, element by element.
#include <ATen/Dispatch.h>

#include <optional>

#include "../common/cuda_common.cuh"
#include "../common/numerics.h"
#include "../common/packed_math.cuh"
#include "../common/rotary_pos_emb_args.h"
#include "../common/views.h"
#include "torch_binding.h"

namespace {

// The vector kernel's three divisions of its index (token, group, pack; batch, position) by
// multiply-shift: a thread of two heads 231 -> 176 instructions of SASS.
using Divider = kh::cuda::Divider<uint32_t>;

// A [B, S, H, D] tensor by its strides (the last one is 1).
struct Bshd {
  void* data;
  int64_t heads, sb, ss, sh;
};

template <typename T>
__device__ __forceinline__ void rotate_pair(T* y, const T* x, const T* cos, const T* sin, int64_t i, int64_t half) {
  using A = at::opmath_type<T>;
  const A x1 = static_cast<A>(x[i]), x2 = static_cast<A>(x[i + half]);
  // Each product and the sum rounded to the dtype, as eager does; mul_rn keeps nvcc from fusing
  // a product into the sum (an FMA rounds once where eager rounds twice).
  const A a1 = kh::round_to<T>(kh::mul_rn(x1, static_cast<A>(cos[i])));
  const A b1 = kh::round_to<T>(kh::mul_rn(x2, static_cast<A>(sin[i])));
  const A a2 = kh::round_to<T>(kh::mul_rn(x2, static_cast<A>(cos[i + half])));
  const A b2 = kh::round_to<T>(kh::mul_rn(x1, static_cast<A>(sin[i + half])));
  y[i] = static_cast<T>(a1 - b1);
  y[i + half] = static_cast<T>(a2 + b2);
}

// One pack of each half of a head: y1 = x1 cos1 - x2 sin1, y2 = x2 cos2 + x1 sin2.
template <typename T>
__device__ __forceinline__ void rotate_packs(kh::cuda::Pack<T>& y1, kh::cuda::Pack<T>& y2, const kh::cuda::Pack<T>& x1,
                                             const kh::cuda::Pack<T>& x2, const kh::cuda::Pack<T>& c1,
                                             const kh::cuda::Pack<T>& c2, const kh::cuda::Pack<T>& s1,
                                             const kh::cuda::Pack<T>& s2) {
  using A = at::opmath_type<T>;
  constexpr int N = kh::cuda::Pack<T>::N;
  if constexpr (kh::cuda::kPacked2<T>) {
    // Two elements an instruction, each product and the sum rounded to the dtype as eager rounds
    // them (packed_math.cuh). In the fp32 form (converts, products, roundings) a head took 160
    // instructions of SASS a thread, now 45: at 512-4096 tokens the kernel was partly issue-bound.
    using kh::cuda::pair;
#pragma unroll
    for (int j = 0; j < N / 2; ++j) {
      pair(y1, j) = __hsub2_rn(__hmul2_rn(pair(x1, j), pair(c1, j)), __hmul2_rn(pair(x2, j), pair(s1, j)));
      pair(y2, j) = __hadd2_rn(__hmul2_rn(pair(x2, j), pair(c2, j)), __hmul2_rn(pair(x1, j), pair(s2, j)));
    }
  } else {
#pragma unroll
    for (int j = 0; j < N; ++j) {
      const A a = static_cast<A>(x1.v[j]), bb = static_cast<A>(x2.v[j]);
      // Each product and the sum rounded to the dtype, as eager does (see rotate_pair).
      const A a1 = kh::round_to<T>(kh::mul_rn(a, static_cast<A>(c1.v[j])));
      const A b1 = kh::round_to<T>(kh::mul_rn(bb, static_cast<A>(s1.v[j])));
      const A a2 = kh::round_to<T>(kh::mul_rn(bb, static_cast<A>(c2.v[j])));
      const A b2 = kh::round_to<T>(kh::mul_rn(a, static_cast<A>(s2.v[j])));
      y1.v[j] = static_cast<T>(a1 - b1);
      y2.v[j] = static_cast<T>(a2 + b2);
    }
  }
}

// One (token, group of HG heads, pack) item per thread over a flat index, in blocks of up to 256
// threads whatever the head count: the thread loads its cos/sin packs once and the packs of its HG
// heads all at once (HG * 32 bytes in flight; with one head a thread, 32 bytes, large problems
// stayed well below the copy bandwidth: bench/gpu/NOTES.md, "RoPE"). rope_launch picks HG and the
// block.
template <typename T, int HG>
__global__ __launch_bounds__(256) void rotary_pos_emb_vec_kernel(Bshd qy, Bshd qx, Bshd ky, Bshd kx,
                                                                 const T* __restrict__ cos, const T* __restrict__ sin,
                                                                 uint32_t total, Divider per_token,
                                                                 Divider packs_per_half, Divider seq, int half,
                                                                 int64_t cb, int64_t cs) {
  using kh::cuda::Pack;
  constexpr int N = Pack<T>::N;
  const uint32_t idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= total) return;
  const auto [token, item] = per_token.divmod(idx);
  const auto [group, pack] = packs_per_half.divmod(item);
  const int i = static_cast<int>(pack) * N;
  const int head = static_cast<int>(group) * HG;  // first of the group's heads, over q's heads then k's
  const bool is_q = head < qx.heads;
  // Field by field: a reference to either parameter struct put a copy of them on the stack (16 bytes
  // of local memory in ptxas' report for two or more heads a thread).
  const Bshd x{is_q ? qx.data : kx.data, 0, is_q ? qx.sb : kx.sb, is_q ? qx.ss : kx.ss, is_q ? qx.sh : kx.sh};
  const Bshd y{is_q ? qy.data : ky.data, 0, is_q ? qy.sb : ky.sb, is_q ? qy.ss : ky.ss, is_q ? qy.sh : ky.sh};
  const int h0 = is_q ? head : head - static_cast<int>(qx.heads);
  const auto [b, s] = seq.divmod(token);
  const T* c = cos + b * cb + s * cs;
  const T* sn = sin + b * cb + s * cs;
  const T* xp = static_cast<const T*>(x.data) + b * x.sb + s * x.ss + h0 * x.sh + i;
  T* yp = static_cast<T*>(y.data) + b * y.sb + s * y.ss + h0 * y.sh + i;
  Pack<T> x1[HG], x2[HG];
#pragma unroll
  for (int k = 0; k < HG; ++k) {
    x1[k] = kh::cuda::load_pack(xp + k * x.sh);
    x2[k] = kh::cuda::load_pack(xp + k * x.sh + half);
  }
  const Pack<T> c1 = kh::cuda::load_pack(c + i), c2 = kh::cuda::load_pack(c + i + half);
  const Pack<T> s1 = kh::cuda::load_pack(sn + i), s2 = kh::cuda::load_pack(sn + i + half);
#pragma unroll
  for (int k = 0; k < HG; ++k) {
    Pack<T> y1, y2;
    rotate_packs(y1, y2, x1[k], x2[k], c1, c2, s1, s2);
    kh::cuda::store_pack(yp + k * y.sh, y1);
    kh::cuda::store_pack(yp + k * y.sh + half, y2);
  }
}

// q's or k's input and output as the token kernel addresses them: strides in elements, shared by
// both and 32-bit (token_heads checks that every offset fits), so a head's address is one multiply-add.
struct TokenHeads {
  const void* x;
  void* y;
  int heads;
  uint32_t sb, ss, sh;
};

// One block per token (b, s), as Liger's program: thread t rotates pack t % P of the halves of heads
// t / P + j S, j < J (S slots over q's heads, then k's). Each thread loads its cos/sin packs once for
// J heads, and the block's warps find the token's cos/sin lines in L1.
template <typename T, int J>
__global__ __launch_bounds__(1024) void rotary_pos_emb_token_kernel(TokenHeads q, TokenHeads k,
                                                                    const T* __restrict__ cos,
                                                                    const T* __restrict__ sin, Divider packs_per_half,
                                                                    Divider seq, int slots, int half, uint32_t cb,
                                                                    uint32_t cs) {
  using kh::cuda::Pack;
  constexpr int N = Pack<T>::N;
  const auto [slot, pack] = packs_per_half.divmod(threadIdx.x);
  if (static_cast<int>(slot) >= slots) return;
  const uint32_t i = pack * N;
  const auto [b, s] = seq.divmod(blockIdx.x);
  const uint32_t tc = b * cb + s * cs + i;
  const Pack<T> c1 = kh::cuda::load_pack(cos + tc), c2 = kh::cuda::load_pack(cos + tc + half);
  const Pack<T> s1 = kh::cuda::load_pack(sin + tc), s2 = kh::cuda::load_pack(sin + tc + half);
  const uint32_t tq = b * q.sb + s * q.ss + i, tk = b * k.sb + s * k.ss + i;
  Pack<T> x1[J], x2[J];
  T* yp[J];
#pragma unroll
  for (int j = 0; j < J; ++j) {
    const int h = static_cast<int>(slot) + j * slots, hk = h - q.heads;
    yp[j] = nullptr;
    if (hk >= k.heads) continue;  // past k's last head
    const bool is_q = hk < 0;
    const uint32_t offset = is_q ? tq + h * q.sh : tk + hk * k.sh;
    const T* xp = static_cast<const T*>(is_q ? q.x : k.x) + offset;
    yp[j] = static_cast<T*>(is_q ? q.y : k.y) + offset;
    x1[j] = kh::cuda::load_pack(xp);
    x2[j] = kh::cuda::load_pack(xp + half);
  }
#pragma unroll
  for (int j = 0; j < J; ++j) {
    if (yp[j] == nullptr) continue;
    Pack<T> y1, y2;
    rotate_packs(y1, y2, x1[j], x2[j], c1, c2, s1, s2);
    kh::cuda::store_pack(yp[j], y1);
    kh::cuda::store_pack(yp[j] + half, y2);
  }
}

template <typename T>
__global__ void rotary_pos_emb_kernel(Bshd qy, Bshd qx, Bshd ky, Bshd kx, const T* __restrict__ cos,
                                      const T* __restrict__ sin, int64_t seq, int64_t half, int64_t cb, int64_t cs) {
  const int64_t b = blockIdx.x / seq, s = blockIdx.x % seq;
  const T* c = cos + b * cb + s * cs;
  const T* sn = sin + b * cb + s * cs;
  const int64_t q_items = qx.heads * half, items = q_items + kx.heads * half;
  for (int64_t item = threadIdx.x; item < items; item += blockDim.x) {
    const bool is_q = item < q_items;
    const Bshd& y = is_q ? qy : ky;
    const Bshd& x = is_q ? qx : kx;
    const int64_t local = is_q ? item : item - q_items;
    const int64_t h = local / half;
    rotate_pair(static_cast<T*>(y.data) + b * y.sb + s * y.ss + h * y.sh,
                static_cast<const T*>(x.data) + b * x.sb + s * x.ss + h * x.sh, c, sn, local % half, half);
  }
}

struct RopeLaunch {
  int heads_per_thread;
  int block;
  int64_t threads_per_token;
};

// Heads per thread: the most of 4, 2, 1 that divides both head counts (a group never spans q and
// k), in 256-thread blocks. Where that leaves fewer blocks than SMs (launch-bound sizes), one head a
// thread and blocks down to 64 threads until there are two per SM: the work spreads over more SMs
// and each thread's loads are fewer. Above that the grouped threads won (bench/gpu/NOTES.md, "RoPE").
RopeLaunch rope_launch(int64_t tokens, int64_t hq, int64_t hk, int64_t packs_per_half) {
  const int64_t sms = kh::cuda::device_attribute<cudaDevAttrMultiProcessorCount>(132);
  const int hg = hq % 4 == 0 && hk % 4 == 0 ? 4 : hq % 2 == 0 && hk % 2 == 0 ? 2 : 1;
  const int64_t grouped = (hq + hk) / hg * packs_per_half;
  if ((tokens * grouped + 255) / 256 >= sms) return {hg, 256, grouped};
  const int64_t per_token = (hq + hk) * packs_per_half, threads = tokens * per_token;
  int block = 256;
  while (block > 64 && (threads + block - 1) / block < 2 * sms) block /= 2;
  return {1, block, per_token};
}

#ifndef KH_ROPE_TOKEN_HEADS  // a build option only for the benchmark's comparison: 2 or 4 (0: the policy below)
#define KH_ROPE_TOKEN_HEADS 0
#endif
// The fewest working threads (two heads each) a token block needs. An SM holds at most 32 blocks, so
// a token of 1 + 1 heads (8 working threads in blocks of 32) keeps 256 threads, 16 KB of q and k, in
// flight per SM, far slower than the flat grid; from 24 threads (5 heads: 48 KB) the token kernel was
// level or ahead (bench/gpu/NOTES.md, "RoPE"). A build option for the benchmark.
#ifndef KH_ROPE_MIN_TOKEN_THREADS
#define KH_ROPE_MIN_TOKEN_THREADS 24
#endif

struct TokenLaunch {
  int heads_per_thread;  // J
  int slots;             // S
  int block;
};

// The token kernel from 64 tokens, as Liger runs RoPE. Two heads a thread (more threads in flight)
// where the grid fits on the SMs at once; else four where that fits (fewer registers a block, so
// one wave where two heads take two); else two (many waves either way). double: two only, as four
// spill. The numbers: bench/gpu/NOTES.md, "RoPE". Blocks of whole warps, at most 1024 threads,
// with at least KH_ROPE_MIN_TOKEN_THREADS working (else nullopt: the flat kernel).
template <typename T>
std::optional<TokenLaunch> token_launch(int64_t tokens, int64_t heads, int64_t packs_per_half) {
  constexpr int64_t kMinTokens = 64;
  if (tokens < kMinTokens) return std::nullopt;
  if ((heads + 1) / 2 * packs_per_half < KH_ROPE_MIN_TOKEN_THREADS) return std::nullopt;  // two heads a thread
  auto with = [&](int j) -> std::optional<TokenLaunch> {
    const int64_t slots = (heads + j - 1) / j, block = (slots * packs_per_half + 31) / 32 * 32;
    if (block > 1024) return std::nullopt;
    return TokenLaunch{j, static_cast<int>(slots), static_cast<int>(block)};
  };
  const int64_t sms = kh::cuda::device_attribute<cudaDevAttrMultiProcessorCount>(132);
  const auto two = with(2);
  if constexpr (sizeof(T) != 8) {
    const auto four = with(4);
    if (KH_ROPE_TOKEN_HEADS == 4 || !two) return four;
    const bool two_fits = tokens <= sms * kh::cuda::resident_blocks<&rotary_pos_emb_token_kernel<T, 2>>(two->block);
    if (KH_ROPE_TOKEN_HEADS == 0 && !two_fits && four &&
        tokens <= sms * kh::cuda::resident_blocks<&rotary_pos_emb_token_kernel<T, 4>>(four->block))
      return four;
  }
  return two;
}

// The token kernel for J heads a thread (double: 2 only).
template <typename T>
auto token_kernel(int heads_per_thread) {
  if constexpr (sizeof(T) == 8) {
    return &rotary_pos_emb_token_kernel<T, 2>;
  } else {
    return heads_per_thread == 4 ? &rotary_pos_emb_token_kernel<T, 4> : &rotary_pos_emb_token_kernel<T, 2>;
  }
}

Bshd bshd(const at::Tensor& t) {
  return {t.data_ptr(), t.size(2), t.stride(0), t.stride(1), t.stride(2)};
}

// x and y ([B, S, H, D] views) for the token kernel, where they share strides and every element's
// offset fits 32 bits.
std::optional<TokenHeads> token_heads(const at::Tensor& x, const at::Tensor& y) {
  if (x.strides() != y.strides()) return std::nullopt;
  if (kh::last_element_offset(x) >= INT32_MAX) return std::nullopt;
  return TokenHeads{x.const_data_ptr(),
                    y.data_ptr(),
                    static_cast<int>(x.size(2)),
                    static_cast<uint32_t>(x.stride(0)),
                    static_cast<uint32_t>(x.stride(1)),
                    static_cast<uint32_t>(x.stride(2))};
}

}  // namespace

void apply_rotary_pos_emb(at::Tensor& q_out, at::Tensor& k_out, const at::Tensor& q, const at::Tensor& k,
                          const at::Tensor& cos, const at::Tensor& sin, int64_t unsqueeze_dim) {
  kh::check_device("apply_rotary_pos_emb", q, true);
  kh::check_rotary_pos_emb_args(q_out, k_out, q, k, cos, sin, unsqueeze_dim);
  const c10::cuda::CUDAGuard guard(q.device());
  auto view = [&](const at::Tensor& t) { return kh::bshd_of(t, unsqueeze_dim); };
  const at::Tensor qx = kh::input_view(q, view), kx = kh::input_view(k, view);
  kh::Output qy(q_out, false, view), ky(k_out, false, view);
  const int64_t batch = qx.size(0), seq = qx.size(1), half = qx.size(3) / 2;
  const at::Tensor c = kh::table_view(cos, batch), s = kh::table_view(sin, batch);
  TORCH_CHECK(c.strides() == s.strides(), "apply_rotary_pos_emb: cos and sin must have the same layout");
  if (qx.numel() + kx.numel() == 0) return;  // (also no launch of zero blocks, no divider by zero)
  const int64_t items = (qx.size(2) + kx.size(2)) * half;
  const int threads = static_cast<int>(std::min<int64_t>(512, (items + 31) / 32 * 32));
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, q.scalar_type(), "apply_rotary_pos_emb_cuda", [&] {
    constexpr int N = kh::cuda::Pack<scalar_t>::N;
    const at::Tensor &qo = qy.get(), &ko = ky.get();
    auto packed = [&](const at::Tensor& t) {
      return kh::cuda::pack_aligned(t, {t.stride(0), t.stride(1), t.stride(2)});
    };
    const RopeLaunch l = rope_launch(batch * seq, qx.size(2), kx.size(2), half / N);
    const int hg = l.heads_per_thread;
    const int64_t per_token = l.threads_per_token, total = batch * seq * per_token;
    if (half % N == 0 && packed(qx) && packed(kx) && packed(qo) && packed(ko) &&
        kh::cuda::pack_aligned(c, {c.stride(0), c.stride(1)}) &&
        kh::cuda::pack_aligned(s, {c.stride(0), c.stride(1)}) && total + 256 <= INT32_MAX) {
      auto go = [&](auto kernel) {
        kernel<<<static_cast<unsigned>((total + l.block - 1) / l.block), l.block, 0, kh::cuda::stream_of(q)>>>(
            bshd(qy.get()), bshd(qx), bshd(ky.get()), bshd(kx), c.const_data_ptr<scalar_t>(),
            s.const_data_ptr<scalar_t>(), static_cast<uint32_t>(total), Divider(static_cast<uint32_t>(per_token)),
            Divider(static_cast<uint32_t>(half / N)), Divider(static_cast<uint32_t>(seq)), static_cast<int>(half),
            c.stride(0), c.stride(1));
      };
      const auto t = token_launch<scalar_t>(batch * seq, qx.size(2) + kx.size(2), half / N);
      const auto tq = token_heads(qx, qy.get()), tk = token_heads(kx, ky.get());
      const int64_t table_last = (batch - 1) * c.stride(0) + (seq - 1) * c.stride(1) + 2 * half;
      if (t && tq && tk && table_last < INT32_MAX) {
        auto token_go = [&](auto kernel) {
          kernel<<<static_cast<unsigned>(batch * seq), t->block, 0, kh::cuda::stream_of(q)>>>(
              *tq, *tk, c.const_data_ptr<scalar_t>(), s.const_data_ptr<scalar_t>(),
              Divider(static_cast<uint32_t>(half / N)), Divider(static_cast<uint32_t>(seq)), t->slots,
              static_cast<int>(half), static_cast<uint32_t>(c.stride(0)), static_cast<uint32_t>(c.stride(1)));
        };
        token_go(token_kernel<scalar_t>(t->heads_per_thread));
        C10_CUDA_KERNEL_LAUNCH_CHECK();
        return;
      }
      hg == 4   ? go(rotary_pos_emb_vec_kernel<scalar_t, 4>)
      : hg == 2 ? go(rotary_pos_emb_vec_kernel<scalar_t, 2>)
                : go(rotary_pos_emb_vec_kernel<scalar_t, 1>);
      C10_CUDA_KERNEL_LAUNCH_CHECK();
      return;
    }
    rotary_pos_emb_kernel<scalar_t><<<static_cast<unsigned>(batch * seq), threads, 0, kh::cuda::stream_of(q)>>>(
        bshd(qy.get()), bshd(qx), bshd(ky.get()), bshd(kx), c.const_data_ptr<scalar_t>(), s.const_data_ptr<scalar_t>(),
        seq, half, c.stride(0), c.stride(1));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
  qy.finish();
  ky.finish();
}
