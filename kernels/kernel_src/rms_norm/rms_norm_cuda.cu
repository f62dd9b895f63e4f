// RMSNorm on CUDA: a group of threads per row (a warp, or a block for long rows), 16-byte loads
// when the rows allow them, fp32 accumulation; Qwen3RMSNorm rounding (normalise, round, weight).
#include <ATen/Dispatch.h>

#include <optional>

#include "../common/checks.h"
#include "../common/cuda_common.cuh"
#include "../common/numerics.h"
#include "../common/views.h"
#include "torch_binding.h"

namespace {

using kh::cuda::Pack;

template <typename T, int G, bool VEC>
__global__ void rms_norm_kernel(T* out, const T* in, const T* __restrict__ weight, int64_t rows, int64_t hidden,
                                int64_t in_stride, int64_t out_stride, double eps) {
  using A = at::opmath_type<T>;
  constexpr int N = Pack<T>::N;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * (blockDim.x / G) + threadIdx.x / G;
  const int lane = threadIdx.x % G;
  const bool active = row < rows;  // inactive lanes still take part in the reduction
  const T* x = in + (active ? row : 0) * in_stride;
  T* y = out + (active ? row : 0) * out_stride;

  A sum = 0;
  if (active) {
    if constexpr (VEC) {
      for (int64_t i = int64_t(lane) * N; i < hidden; i += int64_t(G) * N) {
        const Pack<T> p = kh::cuda::load_pack(x + i);
#pragma unroll
        for (int j = 0; j < N; ++j) sum += static_cast<A>(p.v[j]) * static_cast<A>(p.v[j]);
      }
    } else {
      for (int64_t i = lane; i < hidden; i += G) sum += static_cast<A>(x[i]) * static_cast<A>(x[i]);
    }
  }
  sum = kh::cuda::group_sum<G>(sum);
  if (!active) return;
  const A inv = kh::cuda::rsqrt_of(sum / static_cast<A>(hidden) + static_cast<A>(eps));

  // Qwen3RMSNorm: normalise in fp32, round to the dtype, then multiply by the weight.
  auto norm = [&](T v, const T* w) {
    const A normed = kh::round_to<T>(static_cast<A>(v) * inv);
    return static_cast<T>(w ? normed * static_cast<A>(*w) : normed);
  };
  if constexpr (VEC) {
    for (int64_t i = int64_t(lane) * N; i < hidden; i += int64_t(G) * N) {
      const Pack<T> p = kh::cuda::load_pack(x + i);
      Pack<T> w{}, o;
      if (weight) w = kh::cuda::load_pack(weight + i);
#pragma unroll
      for (int j = 0; j < N; ++j) o.v[j] = norm(p.v[j], weight ? &w.v[j] : nullptr);
      kh::cuda::store_pack(y + i, o);
    }
  } else {
    for (int64_t i = lane; i < hidden; i += G) y[i] = norm(x[i], weight ? weight + i : nullptr);
  }
}

template <typename T>
void launch(at::Tensor& y, const at::Tensor& x, const at::Tensor& w, double eps) {
  const int64_t rows = x.size(0), hidden = x.size(1);
  if (rows == 0) return;
  const T* wp = w.defined() ? w.const_data_ptr<T>() : nullptr;
  const bool vec = hidden % Pack<T>::N == 0 && kh::cuda::pack_aligned(x, {x.stride(0)}) &&
                   kh::cuda::pack_aligned(y, {y.stride(0)}) && (!wp || kh::cuda::aligned16(wp));
  const dim3 grid = kh::cuda::row_grid(rows, hidden), block = kh::cuda::row_block(hidden);
  const cudaStream_t stream = kh::cuda::stream_of(x);
  auto go = [&](auto kernel) {
    kernel<<<grid, block, 0, stream>>>(y.mutable_data_ptr<T>(), x.const_data_ptr<T>(), wp, rows, hidden, x.stride(0),
                                       y.stride(0), eps);
  };
  if (kh::cuda::wide_rows(hidden)) {
    vec ? go(rms_norm_kernel<T, kh::cuda::kWideGroup, true>) : go(rms_norm_kernel<T, kh::cuda::kWideGroup, false>);
  } else {
    vec ? go(rms_norm_kernel<T, kh::cuda::kNarrowGroup, true>) : go(rms_norm_kernel<T, kh::cuda::kNarrowGroup, false>);
  }
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace

void rms_norm(at::Tensor& out, const at::Tensor& input, const std::optional<at::Tensor>& weight, double eps) {
  kh::check_device("rms_norm", input, true);
  const at::Tensor w = kh::check_norm_args("rms_norm", "out", out, input, weight);
  const c10::cuda::CUDAGuard guard(input.device());
  const at::Tensor x = kh::input_view(input, kh::rows_of);
  kh::Output y(out, false, kh::rows_of);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "rms_norm_cuda",
                                  [&] { launch<scalar_t>(y.get(), x, w, eps); });
  y.finish();
}
