// diffusers' LTX-Video apply_rotary_emb on the CPU: adjacent channel pairs across the whole inner
// dimension, fp32 cos/sin per channel, fp32 math with one rounding; q and k in one pass.
#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <ATen/Parallel.h>

#include <optional>

#include "../common/ltx_rotary_args.h"
#include "torch_binding.h"

namespace {

template <typename scalar_t, typename acc_t = at::opmath_type<scalar_t>>
void rotate_row(scalar_t* y, const scalar_t* x, const float* cos, const float* sin, int64_t channels) {
  for (int64_t i = 0; i < channels; i += 2) {
    const acc_t a = static_cast<acc_t>(x[i]), b = static_cast<acc_t>(x[i + 1]);
    // Two products then a sum, as eager computes x*cos + rot(x)*sin with rot(x) = (-b, a).
    const acc_t p0 = a * static_cast<acc_t>(cos[i]), r0 = b * static_cast<acc_t>(sin[i]);
    const acc_t p1 = b * static_cast<acc_t>(cos[i + 1]), r1 = a * static_cast<acc_t>(sin[i + 1]);
    y[i] = static_cast<scalar_t>(p0 - r0);
    y[i + 1] = static_cast<scalar_t>(p1 + r1);
  }
}

template <typename scalar_t>
void rotate(at::Tensor& y, const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin, int64_t b, int64_t s) {
  rotate_row<scalar_t>(y.mutable_data_ptr<scalar_t>() + b * y.stride(0) + s * y.stride(1),
                       x.const_data_ptr<scalar_t>() + b * x.stride(0) + s * x.stride(1),
                       cos.const_data_ptr<float>() + b * cos.stride(0) + s * cos.stride(1),
                       sin.const_data_ptr<float>() + b * sin.stride(0) + s * sin.stride(1), x.size(2));
}

}  // namespace

void ltx_rotary_emb(at::Tensor& q_out, const std::optional<at::Tensor>& k_out, const at::Tensor& q,
                    const std::optional<at::Tensor>& k, const at::Tensor& cos, const at::Tensor& sin) {
  kh::check_device("ltx_rotary_emb", q, false);
  // Not a structured binding: lambdas below capture them (C++20 only).
  const std::pair<at::Tensor, at::Tensor> tables = kh::check_ltx_rotary_args(q_out, k_out, q, k, cos, sin);
  const at::Tensor& c = tables.first;
  const at::Tensor& s = tables.second;
  const at::Tensor qx = kh::input_view(q, kh::last_contiguous_of);
  kh::Output qy(q_out, false, kh::last_contiguous_of);
  at::Tensor kx, k_out_ref;
  std::optional<kh::Output> ky;
  if (k && k->defined()) {
    kx = kh::input_view(*k, kh::last_contiguous_of);
    k_out_ref = *k_out;
    ky.emplace(k_out_ref, false, kh::last_contiguous_of);
  }
  const int64_t seq = q.size(1);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, q.scalar_type(), "ltx_rotary_emb_cpu", [&] {
    at::parallel_for(0, q.size(0) * seq, 16, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        rotate<scalar_t>(qy.get(), qx, c, s, t / seq, t % seq);
        if (ky) rotate<scalar_t>(ky->get(), kx, c, s, t / seq, t % seq);
      }
    });
  });
  qy.finish();
  if (ky) ky->finish();
}
