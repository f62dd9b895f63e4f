// fused_add_rms_norm on the CPU: residual <- input + residual, input <- rms_norm(residual), in place.
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
void fused_add_rms_norm_rows(at::Tensor& x, at::Tensor& res, const scalar_t* weight, double eps) {
  const int64_t rows = x.size(0), hidden = x.size(1);
  const int64_t xs = x.stride(0), rs = res.stride(0);
  scalar_t* xp = x.mutable_data_ptr<scalar_t>();
  scalar_t* rp = res.mutable_data_ptr<scalar_t>();
  at::parallel_for(0, rows, 16, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const scalar_t* xr = xp + r * xs;
      scalar_t* rr = rp + r * rs;
      // The sum is rounded to the dtype, as `residual + hidden` in eager mode is.
      for (int64_t i = 0; i < hidden; ++i) {
        rr[i] = static_cast<scalar_t>(static_cast<acc_t>(xr[i]) + static_cast<acc_t>(rr[i]));
      }
    }
  });
  // The statistics as rms_norm takes them (row_statistics.h), so the two agree bit for bit.
  const at::Tensor inverse_rms = kh::inverse_rms_of_rows<acc_t>(res, eps);
  const acc_t* inv_of_row = inverse_rms.const_data_ptr<acc_t>();
  at::parallel_for(0, rows, 16, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      scalar_t* xr = xp + r * xs;
      const scalar_t* rr = rp + r * rs;
      const acc_t inv = inv_of_row[r];
      for (int64_t i = 0; i < hidden; ++i) {
        const acc_t normed = kh::round_to<scalar_t>(static_cast<acc_t>(rr[i]) * inv);
        xr[i] = static_cast<scalar_t>(weight ? normed * static_cast<acc_t>(weight[i]) : normed);
      }
    }
  });
}

}  // namespace

void fused_add_rms_norm(at::Tensor& input, at::Tensor& residual, const std::optional<at::Tensor>& weight, double eps) {
  kh::check_device("fused_add_rms_norm", input, false);
  const at::Tensor w = kh::check_norm_args("fused_add_rms_norm", "residual", residual, input, weight);
  kh::Output x(input, /*load=*/true, kh::rows_of);
  kh::Output res(residual, /*load=*/true, kh::rows_of);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, input.scalar_type(), "fused_add_rms_norm_cpu", [&] {
    fused_add_rms_norm_rows<scalar_t>(x.get(), res.get(), w.defined() ? w.const_data_ptr<scalar_t>() : nullptr, eps);
  });
  x.finish();
  res.finish();
}
