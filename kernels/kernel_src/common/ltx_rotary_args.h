// Argument checks for the LTX-Video rotary embedding, shared by the backends.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/util/Exception.h>

#include <optional>

#include "checks.h"
#include "views.h"

namespace kh {

inline void check_ltx_operand(const char* what, const at::Tensor& out, const at::Tensor& x, const at::Tensor& q) {
  constexpr const char* op = "ltx_rotary_emb";
  check_float(op, what, x);
  TORCH_CHECK(x.dim() == 3 && x.size(2) % 2 == 0, op, ": ", what, " must be [B, S, C] with C even, got ",
              x.sizes());
  TORCH_CHECK(x.size(0) == q.size(0) && x.size(1) == q.size(1) && x.size(2) == q.size(2), op, ": ", what,
              " has shape ", x.sizes(), ", q has ", q.sizes());
  check_like(op, "output", out, what, x);
}

// Checks every argument; returns cos and sin as [B, S, C] fp32 views (batch stride 0 if broadcast).
inline std::pair<at::Tensor, at::Tensor> check_ltx_rotary_args(const at::Tensor& q_out,
                                                              const std::optional<at::Tensor>& k_out,
                                                              const at::Tensor& q, const std::optional<at::Tensor>& k,
                                                              const at::Tensor& cos, const at::Tensor& sin) {
  constexpr const char* op = "ltx_rotary_emb";
  check_ltx_operand("q", q_out, q, q);
  const bool has_k = k && k->defined();
  TORCH_CHECK(has_k == (k_out && k_out->defined()), op, ": k and k_out must be given together");
  if (has_k) check_ltx_operand("k", *k_out, *k, q);
  std::pair<at::Tensor, at::Tensor> tables;
  for (const at::Tensor* t : {&cos, &sin}) {
    TORCH_CHECK(t->scalar_type() == at::kFloat, op, ": cos and sin must be float32 (as diffusers computes them), got ",
                t->scalar_type());
    TORCH_CHECK(t->device() == q.device(), op, ": cos/sin are on ", t->device(), ", q on ", q.device());
    TORCH_CHECK(t->dim() == 3 && (t->size(0) == q.size(0) || t->size(0) == 1) && t->size(1) == q.size(1) &&
                    t->size(2) == q.size(2),
                op, ": cos and sin must be [", q.size(0), " or 1, ", q.size(1), ", ", q.size(2), "], got ", t->sizes());
    at::Tensor v = last_dim_contiguous(*t) ? *t : t->contiguous();
    if (v.size(0) != q.size(0)) v = v.as_strided({q.size(0), v.size(1), v.size(2)}, {0, v.stride(1), v.stride(2)});
    (t == &cos ? tables.first : tables.second) = v;
  }
  return tables;
}

}  // namespace kh
