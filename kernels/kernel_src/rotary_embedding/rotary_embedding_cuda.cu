// vLLM-style rotary_embedding on CUDA, in place: one block per token, its threads over the
// (head, pair) items of query and then key, so both rotate in one launch from one cache row.
#include <ATen/Dispatch.h>

#include <optional>

#include "../common/cuda_common.cuh"
#include "../common/rotary_args.h"
#include "torch_binding.h"

namespace {

struct Heads {
  void* data;
  int64_t heads, token_stride, head_stride;
};

template <typename T, typename C>
__device__ __forceinline__ void rotate_pair(T* x, int64_t i, int64_t half, const C* cos, const C* sin, bool is_neox) {
  using A = at::opmath_type<T>;
  const int64_t i1 = is_neox ? i : 2 * i;
  const int64_t i2 = is_neox ? i + half : 2 * i + 1;
  const A a = static_cast<A>(x[i1]), b = static_cast<A>(x[i2]);
  const A c = static_cast<A>(cos[i]), s = static_cast<A>(sin[i]);
  x[i1] = static_cast<T>(a * c - b * s);
  x[i2] = static_cast<T>(b * c + a * s);
}

template <typename T, typename C, typename P>
__global__ void rotary_embedding_kernel(const P* __restrict__ positions, Heads q, Heads k,
                                        const C* __restrict__ cache, int64_t max_pos, int64_t rot_dim, bool is_neox) {
  const int64_t token = blockIdx.x;
  const int64_t pos = positions[token];
  CUDA_KERNEL_ASSERT(pos >= 0 && pos < max_pos);
  const int64_t half = rot_dim / 2;
  const C* cos = cache + pos * rot_dim;
  const C* sin = cos + half;
  const int64_t q_items = q.heads * half, items = q_items + k.heads * half;
  for (int64_t item = threadIdx.x; item < items; item += blockDim.x) {
    const bool is_q = item < q_items;
    const Heads& t = is_q ? q : k;
    const int64_t local = is_q ? item : item - q_items;
    T* x = static_cast<T*>(t.data) + token * t.token_stride + (local / half) * t.head_stride;
    rotate_pair<T>(x, local % half, half, cos, sin, is_neox);
  }
}

template <typename T, typename C>
void launch(const at::Tensor& positions, at::Tensor& q, at::Tensor* k, const at::Tensor& cache, bool is_neox) {
  const int64_t tokens = q.size(0);
  if (tokens == 0) return;
  const Heads qh{q.mutable_data_ptr(), q.size(1), q.stride(0), q.stride(1)};
  const Heads kh_{k ? k->mutable_data_ptr() : nullptr, k ? k->size(1) : 0, k ? k->stride(0) : 0,
                  k ? k->stride(1) : 0};
  const int64_t items = (qh.heads + kh_.heads) * (cache.size(1) / 2);
  const int threads = static_cast<int>(std::min<int64_t>(512, (items + 31) / 32 * 32));
  const cudaStream_t stream = kh::cuda::stream_of(q);
  const at::Tensor pos = positions.reshape({-1});
  if (pos.scalar_type() == at::kLong) {
    rotary_embedding_kernel<T, C, int64_t><<<static_cast<unsigned>(tokens), threads, 0, stream>>>(
        pos.const_data_ptr<int64_t>(), qh, kh_, cache.const_data_ptr<C>(), cache.size(0), cache.size(1), is_neox);
  } else {
    rotary_embedding_kernel<T, C, int32_t><<<static_cast<unsigned>(tokens), threads, 0, stream>>>(
        pos.const_data_ptr<int32_t>(), qh, kh_, cache.const_data_ptr<C>(), cache.size(0), cache.size(1), is_neox);
  }
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace

void rotary_embedding(const at::Tensor& positions, at::Tensor& query, const std::optional<at::Tensor>& key,
                      int64_t head_size, const at::Tensor& cos_sin_cache, bool is_neox) {
  kh::check_device("rotary_embedding", query, true);
  const at::Tensor cache = kh::check_rotary_embedding_args(positions, query, key, head_size, cos_sin_cache);
  const c10::cuda::CUDAGuard guard(query.device());
  const int64_t lead = positions.dim();
  auto view = [&](const at::Tensor& t) { return kh::token_heads_of(t, lead, head_size); };
  kh::Output q(query, /*load=*/true, view);
  at::Tensor key_ref = key && key->defined() ? *key : at::Tensor();
  std::optional<kh::Output> k;
  if (key_ref.defined()) k.emplace(key_ref, /*load=*/true, view);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, query.scalar_type(), "rotary_embedding_cuda", [&] {
    at::Tensor* kp = k ? &k->get() : nullptr;
    if (cache.scalar_type() == query.scalar_type()) {
      launch<scalar_t, scalar_t>(positions, q.get(), kp, cache, is_neox);
    } else {
      launch<scalar_t, float>(positions, q.get(), kp, cache, is_neox);
    }
  });
  q.finish();
  if (k) k->finish();
}
