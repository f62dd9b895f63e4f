// Argument preparation for adaln, shared by the backends: input/out as [B, S, H] views with a
// contiguous last dimension, scale/shift as [B, S, H] views whose batch or sequence stride is 0
// where they broadcast (per-sample [B, H], [B, 1, H] or [1, ...]).
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/util/Exception.h>

#include "checks.h"
#include "views.h"

namespace kh {

// [B, H] -> [B, 1, H]; [B, S, H] as is.
inline at::Tensor as_bsh(const at::Tensor& t) { return t.dim() == 2 ? t.unsqueeze(1) : t; }

inline at::Tensor modulation_view(const char* what, const at::Tensor& t, const at::Tensor& x) {
  constexpr const char* op = "adaln";
  check_like(op, what, t, "input", x, false);
  TORCH_CHECK(t.dim() == 2 || t.dim() == 3, op, ": ", what, " must be [B, H] or [B, S, H], got ", t.sizes());
  at::Tensor v = as_bsh(t);
  const int64_t b = x.size(0), s = x.size(1), h = x.size(2);
  TORCH_CHECK((v.size(0) == b || v.size(0) == 1) && (v.size(1) == s || v.size(1) == 1) && v.size(2) == h, op, ": ",
              what, " of shape ", t.sizes(), " does not broadcast to input ", x.sizes());
  if (!last_dim_contiguous(v)) v = v.contiguous();
  return v.as_strided({b, s, h}, {v.size(0) == 1 ? 0 : v.stride(0), v.size(1) == 1 ? 0 : v.stride(1), 1});
}

inline at::Tensor check_adaln_args(const at::Tensor& out, const at::Tensor& input,
                                   const std::optional<at::Tensor>& weight) {
  TORCH_CHECK(input.dim() == 2 || input.dim() == 3, "adaln: input must be [B, H] or [B, S, H], got ", input.sizes());
  return check_norm_args("adaln", "out", out, input, weight);
}

}  // namespace kh
