// fused_add_rms_norm on the CPU: residual <- input + residual, input <- rms_norm(residual), in place.
#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <ATen/Parallel.h>

#include <cmath>
#include <optional>

#include "../common/checks.h"
#include "../common/numerics.h"
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
      scalar_t* xr = xp + r * xs;
      scalar_t* rr = rp + r * rs;
      acc_t sum = 0;
      for (int64_t i = 0; i < hidden; ++i) {
        // The sum is rounded to the dtype first, as `residual + hidden` in eager mode is.
        const scalar_t s = static_cast<scalar_t>(static_cast<acc_t>(xr[i]) + static_cast<acc_t>(rr[i]));
        rr[i] = s;
        const acc_t v = static_cast<acc_t>(s);
        sum += v * v;
      }
      const acc_t inv = acc_t(1) / std::sqrt(sum / static_cast<acc_t>(hidden) + static_cast<acc_t>(eps));
      for (int64_t i = 0; i < hidden; ++i) {
        const acc_t normed = kh::round_to<scalar_t>(static_cast<acc_t>(rr[i]) * inv);
        xr[i] = static_cast<scalar_t>(weight ? normed * static_cast<acc_t>(weight[i]) : normed);
      }
    }
  });
}

}  // namespace

void fused_add_rms_norm(at::Tensor& input, at::Tensor& residual, const std::optional<at::Tensor>& weight,
                        double eps) {
  kh::check_device("fused_add_rms_norm", input, false);
  const at::Tensor w = kh::check_norm_args("fused_add_rms_norm", "residual", residual, input, weight);
  kh::Output x(input, /*load=*/true, kh::rows_of);
  kh::Output res(residual, /*load=*/true, kh::rows_of);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, input.scalar_type(), "fused_add_rms_norm_cpu", [&] {
    fused_add_rms_norm_rows<scalar_t>(x.get(), res.get(), w.defined() ? w.const_data_ptr<scalar_t>() : nullptr,
                                      eps);
  });
  x.finish();
  res.finish();
}
