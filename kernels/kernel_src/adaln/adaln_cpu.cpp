// AdaLN on the CPU: out = norm(x) * (1 + scale) + shift, one row per task, fp32 statistics.
#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <ATen/Parallel.h>

#include <optional>

#include "../common/adaln_args.h"
#include "../common/numerics.h"
#include "../common/row_statistics.h"
#include "torch_binding.h"

namespace {

template <typename scalar_t, typename acc_t = at::opmath_type<scalar_t>>
void adaln_rows(at::Tensor& y, const at::Tensor& x, const at::Tensor& weight_tensor, const at::Tensor& scale,
                const at::Tensor& shift, double eps, bool layer_norm) {
  const scalar_t* weight = weight_tensor.defined() ? weight_tensor.const_data_ptr<scalar_t>() : nullptr;
  const int64_t batch = x.size(0), seq = x.size(1), hidden = x.size(2);
  // The statistics come from the ATen ops the eager modules use (row_statistics.h): the LayerNorm
  // base is at::layer_norm's own output (already rounded), the RMS base its 1 / rms.
  const at::Tensor rows = x.reshape({batch * seq, hidden});
  const std::optional<at::Tensor> affine =
      weight_tensor.defined() ? std::optional<at::Tensor>(weight_tensor) : std::nullopt;
  const at::Tensor layer_normed =
      layer_norm ? at::layer_norm(rows.contiguous(), {hidden}, affine, std::nullopt, eps).contiguous() : at::Tensor();
  const at::Tensor inverse_rms = layer_norm ? at::Tensor() : kh::inverse_rms_of_rows<acc_t>(rows, eps);
  at::parallel_for(0, batch * seq, 16, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t b = r / seq, s = r % seq;
      const scalar_t* xr = x.const_data_ptr<scalar_t>() + b * x.stride(0) + s * x.stride(1);
      const scalar_t* sc = scale.const_data_ptr<scalar_t>() + b * scale.stride(0) + s * scale.stride(1);
      const scalar_t* sh = shift.const_data_ptr<scalar_t>() + b * shift.stride(0) + s * shift.stride(1);
      scalar_t* yr = y.mutable_data_ptr<scalar_t>() + b * y.stride(0) + s * y.stride(1);
      const scalar_t* ln = layer_norm ? layer_normed.const_data_ptr<scalar_t>() + r * hidden : nullptr;
      const acc_t inv = layer_norm ? acc_t(0) : inverse_rms.const_data_ptr<acc_t>()[r];
      for (int64_t i = 0; i < hidden; ++i) {
        // Rounded where diffusers' eager code rounds: the norm (times the weight: one rounding for
        // LayerNorm, two for RMSNorm), 1 + scale, the product, the sum.
        acc_t n = 0;
        if (layer_norm) {
          n = static_cast<acc_t>(ln[i]);  // at::layer_norm applied the weight and rounded once
        } else {
          n = static_cast<acc_t>(xr[i]) * inv;
          if (weight) n = kh::round_to<scalar_t>(n) * static_cast<acc_t>(weight[i]);
          n = kh::round_to<scalar_t>(n);
        }
        const acc_t a = kh::round_to<scalar_t>(acc_t(1) + static_cast<acc_t>(sc[i]));
        const acc_t p = kh::round_to<scalar_t>(n * a);
        yr[i] = static_cast<scalar_t>(p + static_cast<acc_t>(sh[i]));
      }
    }
  });
}

}  // namespace

void adaln(at::Tensor& out, const at::Tensor& input, const std::optional<at::Tensor>& weight, const at::Tensor& scale,
           const at::Tensor& shift, double eps, bool layer_norm) {
  kh::check_device("adaln", input, false);
  const at::Tensor w = kh::check_adaln_args(out, input, weight);
  const at::Tensor x = kh::input_view(kh::as_bsh(input), kh::last_contiguous_of);
  const at::Tensor sc = kh::modulation_view("scale", scale, x), sh = kh::modulation_view("shift", shift, x);
  at::Tensor out3 = kh::as_bsh(out);
  kh::Output y(out3, false, kh::last_contiguous_of);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, input.scalar_type(), "adaln_cpu",
                                  [&] { adaln_rows<scalar_t>(y.get(), x, w, sc, sh, eps, layer_norm); });
  y.finish();
}
