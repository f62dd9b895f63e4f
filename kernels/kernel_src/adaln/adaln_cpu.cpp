// AdaLN on the CPU: out = norm(x) * (1 + scale) + shift, one row per task, fp32 statistics.
#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <ATen/Parallel.h>

#include <cmath>
#include <optional>

#include "../common/adaln_args.h"
#include "../common/numerics.h"
#include "torch_binding.h"

namespace {

template <typename scalar_t, typename acc_t = at::opmath_type<scalar_t>>
void adaln_rows(at::Tensor& y, const at::Tensor& x, const scalar_t* weight, const at::Tensor& scale,
                const at::Tensor& shift, double eps, bool layer_norm) {
  const int64_t batch = x.size(0), seq = x.size(1), hidden = x.size(2);
  at::parallel_for(0, batch * seq, 16, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t b = r / seq, s = r % seq;
      const scalar_t* xr = x.const_data_ptr<scalar_t>() + b * x.stride(0) + s * x.stride(1);
      const scalar_t* sc = scale.const_data_ptr<scalar_t>() + b * scale.stride(0) + s * scale.stride(1);
      const scalar_t* sh = shift.const_data_ptr<scalar_t>() + b * shift.stride(0) + s * shift.stride(1);
      scalar_t* yr = y.mutable_data_ptr<scalar_t>() + b * y.stride(0) + s * y.stride(1);
      acc_t mean = 0;
      if (layer_norm) {
        for (int64_t i = 0; i < hidden; ++i) mean += static_cast<acc_t>(xr[i]);
        mean /= static_cast<acc_t>(hidden);
      }
      acc_t sq = 0;
      for (int64_t i = 0; i < hidden; ++i) {
        const acc_t v = static_cast<acc_t>(xr[i]) - mean;
        sq += v * v;
      }
      const acc_t inv = acc_t(1) / std::sqrt(sq / static_cast<acc_t>(hidden) + static_cast<acc_t>(eps));
      for (int64_t i = 0; i < hidden; ++i) {
        // Rounded where diffusers' eager code rounds: the norm (times the weight: one rounding for
        // LayerNorm, two for RMSNorm), 1 + scale, the product, the sum.
        acc_t n = (static_cast<acc_t>(xr[i]) - mean) * inv;
        if (weight) n = layer_norm ? n * static_cast<acc_t>(weight[i]) : kh::round_to<scalar_t>(n) * static_cast<acc_t>(weight[i]);
        n = kh::round_to<scalar_t>(n);
        const acc_t a = kh::round_to<scalar_t>(acc_t(1) + static_cast<acc_t>(sc[i]));
        const acc_t p = kh::round_to<scalar_t>(n * a);
        yr[i] = static_cast<scalar_t>(p + static_cast<acc_t>(sh[i]));
      }
    }
  });
}

}  // namespace

void adaln(at::Tensor& out, const at::Tensor& input, const std::optional<at::Tensor>& weight,
           const at::Tensor& scale, const at::Tensor& shift, double eps, bool layer_norm) {
  kh::check_device("adaln", input, false);
  const at::Tensor w = kh::check_adaln_args(out, input, weight);
  const at::Tensor x = kh::input_view(kh::as_bsh(input), kh::last_contiguous_of);
  const at::Tensor sc = kh::modulation_view("scale", scale, x), sh = kh::modulation_view("shift", shift, x);
  at::Tensor out3 = kh::as_bsh(out);
  kh::Output y(out3, false, kh::last_contiguous_of);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, input.scalar_type(), "adaln_cpu", [&] {
    adaln_rows<scalar_t>(y.get(), x, w.defined() ? w.const_data_ptr<scalar_t>() : nullptr, sc, sh, eps, layer_norm);
  });
  y.finish();
}
