// RMSNorm on the CPU: one row per task, fp32 accumulation, rows split across threads.
#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <ATen/Parallel.h>

#include <optional>

#include "../common/checks.h"
#include "../common/numerics.h"
#include "../common/row_statistics.h"
#include "../common/views.h"
#include "torch_binding.h"

namespace {

template <typename scalar_t, typename acc_t = at::opmath_type<scalar_t>>
void rms_norm_rows(at::Tensor& y, const at::Tensor& x, const scalar_t* weight, double eps) {
  const int64_t rows = x.size(0), hidden = x.size(1);
  const int64_t xs = x.stride(0), ys = y.stride(0);
  const scalar_t* in = x.const_data_ptr<scalar_t>();
  scalar_t* out = y.mutable_data_ptr<scalar_t>();
  const at::Tensor inverse_rms = kh::inverse_rms_of_rows<acc_t>(x, eps);
  const acc_t* inv_of_row = inverse_rms.const_data_ptr<acc_t>();
  at::parallel_for(0, rows, 16, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const scalar_t* xr = in + r * xs;
      scalar_t* yr = out + r * ys;
      const acc_t inv = inv_of_row[r];
      for (int64_t i = 0; i < hidden; ++i) {
        // Qwen3RMSNorm: normalise in fp32, round to the dtype, then multiply by the weight.
        const acc_t normed = kh::round_to<scalar_t>(static_cast<acc_t>(xr[i]) * inv);
        yr[i] = static_cast<scalar_t>(weight ? normed * static_cast<acc_t>(weight[i]) : normed);
      }
    }
  });
}

}  // namespace

void rms_norm(at::Tensor& out, const at::Tensor& input, const std::optional<at::Tensor>& weight, double eps) {
  kh::check_device("rms_norm", input, false);
  const at::Tensor w = kh::check_norm_args("rms_norm", "out", out, input, weight);
  const at::Tensor x = kh::input_view(input, kh::rows_of);
  kh::Output y(out, false, kh::rows_of);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "rms_norm_cpu", [&] {
    rms_norm_rows<scalar_t>(y.get(), x, w.defined() ? w.const_data_ptr<scalar_t>() : nullptr, eps);
  });
  y.finish();
}
