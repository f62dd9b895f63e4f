// transformers' apply_rotary_pos_emb on the CPU: q and k in one pass over the tokens, the
// roundings of the eager expression q * cos + rotate_half(q) * sin reproduced.
#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <ATen/Parallel.h>

#include "../common/numerics.h"
#include "../common/rotary_pos_emb_args.h"
#include "torch_binding.h"

namespace {

// One token (b, s) of all heads of x into y; x, y [B, S, H, D], cos/sin [B, S, D].
template <typename scalar_t, typename acc_t = at::opmath_type<scalar_t>>
void rotate_token(at::Tensor& y, const at::Tensor& x, const scalar_t* cos, const scalar_t* sin, int64_t b,
                  int64_t s) {
  const int64_t half = x.size(3) / 2;
  const scalar_t* xt = x.const_data_ptr<scalar_t>() + b * x.stride(0) + s * x.stride(1);
  scalar_t* yt = y.mutable_data_ptr<scalar_t>() + b * y.stride(0) + s * y.stride(1);
  for (int64_t h = 0; h < x.size(2); ++h) {
    const scalar_t* xh = xt + h * x.stride(2);
    scalar_t* yh = yt + h * y.stride(2);
    for (int64_t i = 0; i < half; ++i) {
      const acc_t x1 = static_cast<acc_t>(xh[i]), x2 = static_cast<acc_t>(xh[i + half]);
      // Eager rounds each product and the sum to the dtype; the negation is exact.
      const acc_t a1 = kh::round_to<scalar_t>(x1 * static_cast<acc_t>(cos[i]));
      const acc_t b1 = kh::round_to<scalar_t>(x2 * static_cast<acc_t>(sin[i]));
      const acc_t a2 = kh::round_to<scalar_t>(x2 * static_cast<acc_t>(cos[i + half]));
      const acc_t b2 = kh::round_to<scalar_t>(x1 * static_cast<acc_t>(sin[i + half]));
      yh[i] = static_cast<scalar_t>(a1 - b1);
      yh[i + half] = static_cast<scalar_t>(a2 + b2);
    }
  }
}

}  // namespace

void apply_rotary_pos_emb(at::Tensor& q_out, at::Tensor& k_out, const at::Tensor& q, const at::Tensor& k,
                          const at::Tensor& cos, const at::Tensor& sin, int64_t unsqueeze_dim) {
  kh::check_device("apply_rotary_pos_emb", q, false);
  kh::check_rotary_pos_emb_args(q_out, k_out, q, k, cos, sin, unsqueeze_dim);
  auto view = [&](const at::Tensor& t) { return kh::bshd_of(t, unsqueeze_dim); };
  const at::Tensor qx = kh::input_view(q, view), kx = kh::input_view(k, view);
  kh::Output qy(q_out, false, view), ky(k_out, false, view);
  const int64_t batch = qx.size(0), seq = qx.size(1);
  const at::Tensor c = kh::table_view(cos, batch), s = kh::table_view(sin, batch);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, q.scalar_type(), "apply_rotary_pos_emb_cpu", [&] {
    at::parallel_for(0, batch * seq, 16, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        const int64_t b = t / seq, i = t % seq;
        const scalar_t* ct = c.const_data_ptr<scalar_t>() + b * c.stride(0) + i * c.stride(1);
        const scalar_t* st = s.const_data_ptr<scalar_t>() + b * s.stride(0) + i * s.stride(1);
        rotate_token<scalar_t>(qy.get(), qx, ct, st, b, i);
        rotate_token<scalar_t>(ky.get(), kx, ct, st, b, i);
      }
    });
  });
  qy.finish();
  ky.finish();
}
