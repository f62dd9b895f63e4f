#pragma once

#include <torch/torch.h>

#include <optional>

// RMSNorm with Qwen3RMSNorm semantics: fp32 accumulation of mean(x^2), x * rsqrt(mean + eps)
// cast back to the input dtype, then multiplied by `weight` (when given) in the input dtype.
void rms_norm(torch::Tensor& out, const torch::Tensor& input, const std::optional<torch::Tensor>& weight,
              double eps);
