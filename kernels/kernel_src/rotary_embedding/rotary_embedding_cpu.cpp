// vLLM-style rotary_embedding on the CPU, in place; one token per task, query and key together.
#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <ATen/Parallel.h>

#include <optional>

#include "../common/rotary_args.h"
#include "torch_binding.h"

namespace {

template <typename scalar_t, typename cache_t, typename acc_t = at::opmath_type<scalar_t>>
void rotate_heads(at::Tensor& t, int64_t token, const cache_t* cos, int64_t half, bool is_neox) {
  const cache_t* sin = cos + half;
  scalar_t* base = t.mutable_data_ptr<scalar_t>() + token * t.stride(0);
  for (int64_t h = 0; h < t.size(1); ++h) {
    scalar_t* x = base + h * t.stride(1);
    for (int64_t i = 0; i < half; ++i) {
      const int64_t i1 = is_neox ? i : 2 * i;
      const int64_t i2 = is_neox ? i + half : 2 * i + 1;
      const acc_t a = static_cast<acc_t>(x[i1]), b = static_cast<acc_t>(x[i2]);
      const acc_t c = static_cast<acc_t>(cos[i]), s = static_cast<acc_t>(sin[i]);
      x[i1] = static_cast<scalar_t>(a * c - b * s);
      x[i2] = static_cast<scalar_t>(b * c + a * s);
    }
  }
}

template <typename scalar_t, typename cache_t>
void rotary_tokens(const at::Tensor& positions, at::Tensor& q, at::Tensor* k, const at::Tensor& cache,
                   bool is_neox) {
  const at::Tensor pos = positions.reshape({-1}).to(at::kLong);
  const int64_t* p = pos.const_data_ptr<int64_t>();
  const int64_t max_pos = cache.size(0), rot_dim = cache.size(1);
  const cache_t* table = cache.const_data_ptr<cache_t>();
  at::parallel_for(0, pos.numel(), 64, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      TORCH_CHECK(p[t] >= 0 && p[t] < max_pos, "rotary_embedding: position ", p[t], " outside the cache's ",
                  max_pos, " rows");
      const cache_t* cos = table + p[t] * rot_dim;
      rotate_heads<scalar_t>(q, t, cos, rot_dim / 2, is_neox);
      if (k) rotate_heads<scalar_t>(*k, t, cos, rot_dim / 2, is_neox);
    }
  });
}

}  // namespace

void rotary_embedding(const at::Tensor& positions, at::Tensor& query, const std::optional<at::Tensor>& key,
                      int64_t head_size, const at::Tensor& cos_sin_cache, bool is_neox) {
  kh::check_device("rotary_embedding", query, false);
  const at::Tensor cache = kh::check_rotary_embedding_args(positions, query, key, head_size, cos_sin_cache);
  const int64_t lead = positions.dim();
  auto view = [&](const at::Tensor& t) { return kh::token_heads_of(t, lead, head_size); };
  kh::Output q(query, /*load=*/true, view);
  at::Tensor key_ref = key && key->defined() ? *key : at::Tensor();
  std::optional<kh::Output> k;
  if (key_ref.defined()) k.emplace(key_ref, /*load=*/true, view);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, query.scalar_type(), "rotary_embedding_cpu", [&] {
    at::Tensor* kp = k ? &k->get() : nullptr;
    if (cache.scalar_type() == query.scalar_type()) {
      rotary_tokens<scalar_t, scalar_t>(positions, q.get(), kp, cache, is_neox);
    } else {
      rotary_tokens<scalar_t, float>(positions, q.get(), kp, cache, is_neox);
    }
  });
  q.finish();
  if (k) k->finish();
}
