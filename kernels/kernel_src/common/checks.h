// Argument checks shared by every op and backend, so that CPU and CUDA reject the same inputs
// with the same messages.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/util/Exception.h>

#include <optional>

namespace kh {

inline void check_float(const char* op, const char* what, const at::Tensor& t) {
  const auto s = t.scalar_type();
  TORCH_CHECK(s == at::kFloat || s == at::kHalf || s == at::kBFloat16 || s == at::kDouble, op, ": ", what,
              " has unsupported dtype ", s, " (float32, float16, bfloat16 or float64)");
}

// `t` has the dtype and device of `ref`, and its shape when `same_shape`.
inline void check_like(const char* op, const char* what, const at::Tensor& t, const char* ref_name,
                       const at::Tensor& ref, bool same_shape = true) {
  TORCH_CHECK(t.scalar_type() == ref.scalar_type(), op, ": ", what, " has dtype ", t.scalar_type(), ", ", ref_name,
              " has ", ref.scalar_type());
  TORCH_CHECK(t.device() == ref.device(), op, ": ", what, " is on ", t.device(), ", ", ref_name, " on ",
              ref.device());
  TORCH_CHECK(!same_shape || t.sizes() == ref.sizes(), op, ": ", what, " has shape ", t.sizes(), ", ", ref_name,
              " has ", ref.sizes());
}

inline void check_device(const char* op, const at::Tensor& t, bool cuda) {
  TORCH_CHECK(cuda ? t.is_cuda() : t.device().is_cpu(), op, ": this is the ", cuda ? "CUDA" : "CPU",
              " implementation; the tensor is on ", t.device());
}

// A per-channel weight of `input`'s last dimension, as a contiguous tensor (undefined if none).
inline at::Tensor channel_weight(const char* op, const std::optional<at::Tensor>& weight, const at::Tensor& input) {
  if (!weight || !weight->defined()) return {};
  const int64_t hidden = input.size(-1);
  TORCH_CHECK(weight->dim() == 1 && weight->size(0) == hidden, op, ": weight must have shape [", hidden, "], got ",
              weight->sizes());
  check_like(op, "weight", *weight, "input", input, false);
  return weight->contiguous();
}

// The common checks of the row-normalising ops (rms_norm, fused_add_rms_norm, adaln).
inline at::Tensor check_norm_args(const char* op, const char* out_name, const at::Tensor& out,
                                  const at::Tensor& input, const std::optional<at::Tensor>& weight) {
  check_float(op, "input", input);
  TORCH_CHECK(input.dim() >= 1 && input.size(-1) > 0, op, ": input must have a non-empty last dimension");
  check_like(op, out_name, out, "input", input);
  return channel_weight(op, weight, input);
}

}  // namespace kh
