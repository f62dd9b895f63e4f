// Plain GELU on CUDA (tanh approximation and exact erf). A contiguous tensor is one long row:
// 16-byte chunks, then the last, partial chunk element by element; other layouts go row by row.
#include <ATen/Dispatch.h>

#include "../common/cuda_common.cuh"
#include "../common/gelu_args.h"
#include "../common/numerics.h"
#include "../common/views.h"
#include "torch_binding.h"

namespace {

using kh::cuda::Pack;

template <typename T, bool VEC>
__global__ void gelu_kernel(T* __restrict__ out, const T* __restrict__ in, int64_t n, int64_t in_stride,
                            int64_t out_stride, int64_t chunks_per_row, int64_t chunks, bool approximate_tanh) {
  using A = at::opmath_type<T>;
  constexpr int N = Pack<T>::N;
  for (int64_t idx = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; idx < chunks;
       idx += int64_t(gridDim.x) * blockDim.x) {
    const int64_t row = idx / chunks_per_row, i0 = (idx % chunks_per_row) * N;
    const T* x = in + row * in_stride + i0;
    T* y = out + row * out_stride + i0;
    if (VEC && i0 + N <= n) {
      const Pack<T> p = kh::cuda::load_pack(x);
      Pack<T> o;
#pragma unroll
      for (int j = 0; j < N; ++j) o.v[j] = static_cast<T>(kh::gelu_math(static_cast<A>(p.v[j]), approximate_tanh));
      kh::cuda::store_pack(y, o);
    } else {
      for (int64_t j = 0; j < N && i0 + j < n; ++j) y[j] = static_cast<T>(kh::gelu_math(static_cast<A>(x[j]), approximate_tanh));
    }
  }
}

void gelu_cuda(const char* op, at::Tensor& out, const at::Tensor& input, bool approximate_tanh) {
  kh::check_device(op, input, true);
  kh::check_gelu_args(op, out, input);
  if (input.numel() == 0) return;
  const c10::cuda::CUDAGuard guard(input.device());
  // Contiguous input and output: one row of numel elements.
  auto flat = [&](const at::Tensor& t) -> std::optional<at::Tensor> {
    if (input.is_contiguous() && out.is_contiguous()) return t.reshape({1, -1});
    return kh::rows_of(t.dim() == 0 ? t.view({1}) : t);
  };
  const at::Tensor x = kh::input_view(input, flat);
  kh::Output y(out, false, flat);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, input.scalar_type(), "gelu_cuda", [&] {
    constexpr int N = Pack<scalar_t>::N;
    at::Tensor& yo = y.get();
    const int64_t rows = x.size(0), n = x.size(1);
    const bool vec = kh::cuda::pack_aligned(x, {x.stride(0)}) && kh::cuda::pack_aligned(yo, {yo.stride(0)});
    const int64_t per_row = (n + N - 1) / N, chunks = rows * per_row;
    const int threads = 256;
    const unsigned grid = kh::cuda::grid_for(chunks, threads);
    auto go = [&](auto kernel) {
      kernel<<<grid, threads, 0, kh::cuda::stream_of(input)>>>(yo.mutable_data_ptr<scalar_t>(),
                                                               x.const_data_ptr<scalar_t>(), n, x.stride(0),
                                                               yo.stride(0), per_row, chunks, approximate_tanh);
    };
    vec ? go(gelu_kernel<scalar_t, true>) : go(gelu_kernel<scalar_t, false>);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
  y.finish();
}

}  // namespace

void gelu_tanh(at::Tensor& out, const at::Tensor& input) { gelu_cuda("gelu_tanh", out, input, true); }

void gelu_erf(at::Tensor& out, const at::Tensor& input) { gelu_cuda("gelu", out, input, false); }
