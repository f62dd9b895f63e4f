// Plain GELU on the CPU (tanh approximation and exact erf), elementwise over rows.
#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <ATen/Parallel.h>

#include "../common/gelu_args.h"
#include "../common/numerics.h"
#include "../common/views.h"
#include "torch_binding.h"

namespace {

template <typename scalar_t, typename acc_t = at::opmath_type<scalar_t>>
void gelu_rows(at::Tensor& y, const at::Tensor& x, bool approximate_tanh) {
  const int64_t rows = y.size(0), n = y.size(1);
  const scalar_t* in = x.const_data_ptr<scalar_t>();
  scalar_t* out = y.mutable_data_ptr<scalar_t>();
  at::parallel_for(0, rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(n, 1)), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const scalar_t* xr = in + r * x.stride(0);
      scalar_t* yr = out + r * y.stride(0);
      for (int64_t i = 0; i < n; ++i) yr[i] = static_cast<scalar_t>(kh::gelu_math(static_cast<acc_t>(xr[i]), approximate_tanh));
    }
  });
}

void gelu_cpu(const char* op, at::Tensor& out, const at::Tensor& input, bool approximate_tanh) {
  kh::check_device(op, input, false);
  kh::check_gelu_args(op, out, input);
  if (input.numel() == 0) return;
  // A 0-d tensor is one row of one element.
  const at::Tensor x = kh::input_view(input.dim() == 0 ? input.reshape({1}) : input, kh::rows_of);
  at::Tensor out1 = out.dim() == 0 ? out.view({1}) : out;
  kh::Output y(out1, false, kh::rows_of);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, input.scalar_type(), "gelu_cpu",
                                  [&] { gelu_rows<scalar_t>(y.get(), x, approximate_tanh); });
  y.finish();
}

}  // namespace

void gelu_tanh(at::Tensor& out, const at::Tensor& input) { gelu_cpu("gelu_tanh", out, input, true); }

void gelu_erf(at::Tensor& out, const at::Tensor& input) { gelu_cpu("gelu", out, input, false); }
