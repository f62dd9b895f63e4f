// Argument preparation for transformers-style apply_rotary_pos_emb, shared by the backends:
// q/k (and their outputs) are seen as [B, S, H, D] views with a contiguous last dimension,
// cos/sin as [B or 1, S, D] (batch stride 0 when broadcast).
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/util/Exception.h>

#include <optional>

#include "checks.h"
#include "views.h"

namespace kh {

// [B, H, S, D] (unsqueeze_dim 1) or [B, S, H, D] (unsqueeze_dim 2) -> a [B, S, H, D] view.
inline at::Tensor bshd(const at::Tensor& t, int64_t unsqueeze_dim) {
  return unsqueeze_dim == 1 ? t.transpose(1, 2) : t;
}

inline std::optional<at::Tensor> bshd_of(const at::Tensor& t, int64_t unsqueeze_dim) {
  return last_contiguous_of(bshd(t, unsqueeze_dim));
}

// cos or sin as a [B, S, D] view; a batch of 1 broadcasts with stride 0.
inline at::Tensor table_view(const at::Tensor& t, int64_t batch) {
  const at::Tensor c = last_dim_contiguous(t) ? t : t.contiguous();
  return c.size(0) == batch ? c : c.as_strided({batch, c.size(1), c.size(2)}, {0, c.stride(1), c.stride(2)});
}

inline void check_rotary_pos_emb_args(const at::Tensor& q_out, const at::Tensor& k_out, const at::Tensor& q,
                                      const at::Tensor& k, const at::Tensor& cos, const at::Tensor& sin,
                                      int64_t unsqueeze_dim) {
  constexpr const char* op = "apply_rotary_pos_emb";
  TORCH_CHECK(unsqueeze_dim == 1 || unsqueeze_dim == 2, op,
              ": unsqueeze_dim must be 1 (q [B, H, S, D]) or 2 (q [B, S, H, D]), got ", unsqueeze_dim);
  check_float(op, "q", q);
  TORCH_CHECK(q.dim() == 4 && k.dim() == 4, op, ": q and k must be 4-D, got ", q.sizes(), " and ", k.sizes());
  check_like(op, "k", k, "q", q, false);
  check_like(op, "q_out", q_out, "q", q);
  check_like(op, "k_out", k_out, "k", k);
  const at::Tensor qv = bshd(q, unsqueeze_dim), kv = bshd(k, unsqueeze_dim);
  TORCH_CHECK(kv.size(0) == qv.size(0) && kv.size(1) == qv.size(1) && kv.size(3) == qv.size(3), op,
              ": q and k differ in batch, sequence or head size: ", q.sizes(), " and ", k.sizes());
  const int64_t batch = qv.size(0), seq = qv.size(1), dim = qv.size(3);
  TORCH_CHECK(dim % 2 == 0, op, ": head size ", dim, " must be even");
  for (const at::Tensor* t : {&cos, &sin}) {
    check_like(op, t == &cos ? "cos" : "sin", *t, "q", q, false);
    TORCH_CHECK(t->dim() == 3 && (t->size(0) == batch || t->size(0) == 1) && t->size(1) == seq && t->size(2) == dim,
                op, ": cos and sin must be [", batch, " or 1, ", seq, ", ", dim, "], got ", t->sizes());
  }
}

}  // namespace kh
