// Gated GELU on the CPU: out = gelu(gate) * up from input [..., 2d], both half orders.
#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <ATen/Parallel.h>

#include "../common/gelu_args.h"
#include "../common/numerics.h"
#include "../common/views.h"
#include "torch_binding.h"

namespace {

template <typename scalar_t, typename acc_t = at::opmath_type<scalar_t>>
void geglu_rows(at::Tensor& y, const at::Tensor& x, bool approximate_tanh, bool gate_first) {
  const int64_t rows = y.size(0), d = y.size(1);
  const scalar_t* in = x.const_data_ptr<scalar_t>();
  scalar_t* out = y.mutable_data_ptr<scalar_t>();
  at::parallel_for(0, rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(d, 1)), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const scalar_t* xr = in + r * x.stride(0);
      const scalar_t* gate = gate_first ? xr : xr + d;
      const scalar_t* up = gate_first ? xr + d : xr;
      scalar_t* yr = out + r * y.stride(0);
      for (int64_t i = 0; i < d; ++i) {
        // gelu(gate) is rounded to the dtype before the product, as eager and vLLM do.
        const acc_t g = kh::round_to<scalar_t>(kh::gelu_math(static_cast<acc_t>(gate[i]), approximate_tanh));
        yr[i] = static_cast<scalar_t>(g * static_cast<acc_t>(up[i]));
      }
    }
  });
}

}  // namespace

void geglu(at::Tensor& out, const at::Tensor& input, bool approximate_tanh, bool gate_first) {
  kh::check_device("geglu", input, false);
  kh::check_geglu_args(out, input);
  const at::Tensor x = kh::input_view(input, kh::rows_of);
  kh::Output y(out, false, kh::rows_of);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, input.scalar_type(), "geglu_cpu", [&] {
    geglu_rows<scalar_t>(y.get(), x, approximate_tanh, gate_first);
  });
  y.finish();
}

void gelu_and_mul(at::Tensor& out, const at::Tensor& input) { geglu(out, input, false, true); }

void gelu_tanh_and_mul(at::Tensor& out, const at::Tensor& input) { geglu(out, input, true, true); }
