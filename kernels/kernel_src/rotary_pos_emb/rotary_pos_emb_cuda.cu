// transformers' apply_rotary_pos_emb on CUDA: one block per token (b, s), its threads over the
// (head, pair) items of q and then k, with the roundings of eager q * cos + rotate_half(q) * sin.
#include <ATen/Dispatch.h>

#include "../common/cuda_common.cuh"
#include "../common/numerics.h"
#include "../common/rotary_pos_emb_args.h"
#include "torch_binding.h"

namespace {

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

Bshd bshd(const at::Tensor& t) { return {t.data_ptr(), t.size(2), t.stride(0), t.stride(1), t.stride(2)}; }

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
  if (batch * seq == 0) return;
  const int64_t items = (qx.size(2) + kx.size(2)) * half;
  const int threads = static_cast<int>(std::min<int64_t>(512, (items + 31) / 32 * 32));
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, q.scalar_type(), "apply_rotary_pos_emb_cuda", [&] {
    rotary_pos_emb_kernel<scalar_t><<<static_cast<unsigned>(batch * seq), threads, 0, kh::cuda::stream_of(q)>>>(
        bshd(qy.get()), bshd(qx), bshd(ky.get()), bshd(kx), c.const_data_ptr<scalar_t>(), s.const_data_ptr<scalar_t>(),
        seq, half, c.stride(0), c.stride(1));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
  qy.finish();
  ky.finish();
}
