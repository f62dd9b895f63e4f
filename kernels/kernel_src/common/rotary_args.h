// Argument preparation for vLLM's rotary_embedding, shared by the CPU and CUDA backends: query and
// key become [tokens, heads, head_size] views (in place, through kh::Output when their strides do
// not fold), the cache a contiguous [max_position, rot_dim] table.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/util/Exception.h>

#include <optional>

#include "checks.h"
#include "views.h"

namespace kh {

// [lead..., H * head_size] or [lead..., H, head_size] -> [tokens, H, head_size] (nullopt: copy).
inline std::optional<at::Tensor> token_heads_of(const at::Tensor& t, int64_t lead, int64_t head_size) {
  const at::Tensor heads = t.dim() == lead + 1 ? t.unflatten(-1, {-1, head_size}) : t;
  if (!last_dim_contiguous(heads)) return std::nullopt;
  return fold_leading(heads, lead);
}

inline void check_rotary_operand(const char* what, const at::Tensor& t, const at::Tensor& positions,
                                 int64_t head_size) {
  const int64_t lead = positions.dim();
  check_float("rotary_embedding", what, t);
  TORCH_CHECK(t.dim() == lead + 1 || t.dim() == lead + 2, "rotary_embedding: ", what, " must be positions.shape + ",
              "[heads * head_size] or + [heads, head_size]; got ", t.sizes(), " for positions ", positions.sizes());
  TORCH_CHECK(t.sizes().slice(0, lead) == positions.sizes(), "rotary_embedding: ", what, " shape ", t.sizes(),
              " does not start with positions shape ", positions.sizes());
  TORCH_CHECK(t.dim() == lead + 1 ? t.size(-1) % head_size == 0 : t.size(-1) == head_size, "rotary_embedding: ",
              what, " last dimension does not match head_size ", head_size);
}

// Checks every argument; returns the contiguous cache.
inline at::Tensor check_rotary_embedding_args(const at::Tensor& positions, const at::Tensor& query,
                                              const std::optional<at::Tensor>& key, int64_t head_size,
                                              const at::Tensor& cache) {
  TORCH_CHECK(positions.scalar_type() == at::kLong || positions.scalar_type() == at::kInt,
              "rotary_embedding: positions must be int64 or int32, got ", positions.scalar_type());
  TORCH_CHECK(head_size > 0, "rotary_embedding: head_size must be positive");
  check_rotary_operand("query", query, positions, head_size);
  if (key && key->defined()) {
    check_rotary_operand("key", *key, positions, head_size);
    check_like("rotary_embedding", "key", *key, "query", query, false);
  }
  TORCH_CHECK(cache.dim() == 2, "rotary_embedding: cos_sin_cache must be [max_position, rot_dim]");
  const int64_t rot_dim = cache.size(1);
  TORCH_CHECK(rot_dim > 0 && rot_dim % 2 == 0 && rot_dim <= head_size, "rotary_embedding: rot_dim ", rot_dim,
              " must be even and at most head_size ", head_size);
  TORCH_CHECK(cache.scalar_type() == query.scalar_type() || cache.scalar_type() == at::kFloat,
              "rotary_embedding: cos_sin_cache must be float32 or the query dtype, got ", cache.scalar_type());
  TORCH_CHECK(cache.device() == query.device() && positions.device() == query.device(),
              "rotary_embedding: positions, query and cos_sin_cache must be on one device");
  return cache.contiguous();
}

}  // namespace kh
