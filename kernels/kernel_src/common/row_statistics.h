// Row statistics for the CPU norms, computed by the very ATen ops the eager modules use
// (transformers' Qwen3RMSNorm and diffusers' RMSNorm: `x.float().pow(2).mean(-1)`, then
// `rsqrt(variance + eps)`). An fp32 sum in another order differs in its last bit, which flips
// a bf16 rounding of `x * rsqrt` that the weight multiply then enlarges; with ATen's own order
// the outputs are the modules' bit for bit, on whatever CPU ATen dispatches to.
#pragma once

#include <ATen/ATen.h>

namespace kh {

// 1 / sqrt(mean(x²) + eps) of each row of a 2-D tensor, in `acc_t` (fp32 for half types).
template <typename acc_t>
at::Tensor inverse_rms_of_rows(const at::Tensor& rows, double eps) {
  const at::Tensor wide = rows.to(c10::CppTypeToScalarType<acc_t>::value);
  return at::rsqrt(wide.pow(2).mean(-1) + eps).contiguous();
}

}  // namespace kh
