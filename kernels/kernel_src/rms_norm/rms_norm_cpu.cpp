// RMSNorm on the CPU: one row per task, fp32 accumulation, rows split across threads.
#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <cmath>
#include <optional>

namespace {

// acc_t is float for fp32/fp16/bf16 (Qwen3RMSNorm's fp32 accumulation) and double for fp64.
template <typename scalar_t, typename acc_t = at::opmath_type<scalar_t>>
void rms_norm_rows(scalar_t* out, const scalar_t* in, const scalar_t* weight, int64_t rows, int64_t hidden,
                   double eps) {
  at::parallel_for(0, rows, 16, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const scalar_t* x = in + r * hidden;
      scalar_t* y = out + r * hidden;
      acc_t sum = 0;
      for (int64_t i = 0; i < hidden; ++i) {
        const acc_t v = static_cast<acc_t>(x[i]);
        sum += v * v;
      }
      const acc_t inv = acc_t(1) / std::sqrt(sum / static_cast<acc_t>(hidden) + static_cast<acc_t>(eps));
      for (int64_t i = 0; i < hidden; ++i) {
        // Qwen3RMSNorm: normalise in fp32, cast to the input dtype, then multiply by the weight.
        const scalar_t normed = static_cast<scalar_t>(static_cast<acc_t>(x[i]) * inv);
        y[i] = weight ? static_cast<scalar_t>(static_cast<acc_t>(normed) * static_cast<acc_t>(weight[i])) : normed;
      }
    }
  });
}

}  // namespace

void rms_norm(torch::Tensor& out, const torch::Tensor& input, const std::optional<torch::Tensor>& weight,
              double eps) {
  TORCH_CHECK(input.device().is_cpu(), "rms_norm: this is the CPU implementation; input is on ", input.device());
  TORCH_CHECK(input.dim() >= 1 && input.size(-1) > 0, "rms_norm: input must have a non-empty last dimension");
  TORCH_CHECK(out.sizes() == input.sizes(), "rms_norm: out has shape ", out.sizes(), ", input has ", input.sizes());
  TORCH_CHECK(out.scalar_type() == input.scalar_type(), "rms_norm: out and input dtypes differ");
  const int64_t hidden = input.size(-1);
  torch::Tensor w;
  if (weight && weight->defined()) {
    TORCH_CHECK(weight->dim() == 1 && weight->size(0) == hidden, "rms_norm: weight must have shape [", hidden, "]");
    TORCH_CHECK(weight->scalar_type() == input.scalar_type(), "rms_norm: weight and input dtypes differ");
    w = weight->contiguous();
  }
  const torch::Tensor x = input.contiguous();
  torch::Tensor y = out.is_contiguous() ? out : torch::empty_like(x);
  const int64_t rows = x.numel() / hidden;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "rms_norm_cpu", [&] {
    rms_norm_rows<scalar_t>(y.data_ptr<scalar_t>(), x.data_ptr<scalar_t>(), w.defined() ? w.data_ptr<scalar_t>() : nullptr,
                            rows, hidden, eps);
  });
  if (!y.is_same(out)) out.copy_(y);
}
