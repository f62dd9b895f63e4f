// Plain GELU on CUDA (tanh approximation and exact erf). A contiguous tensor is one long row:
// 16-byte chunks (8-byte ones on small grids), then the last, partial chunk element by element;
// other layouts go row by row.
// fp16/bf16 use the fast tanh form of gelu_fast.cuh; indices are 32-bit where they fit.
#include <ATen/Dispatch.h>

#include <type_traits>

#include "../common/cuda_common.cuh"
#include "../common/gelu_args.h"
#include "../common/gelu_fast.cuh"
#include "../common/numerics.h"
#include "../common/views.h"
#include "torch_binding.h"

namespace {

using kh::cuda::Pack;

// TANH is a template argument so that a kernel holds one gelu (see geglu_cuda.cu).
template <typename T, bool VEC, bool TANH, typename I>
__global__ void gelu_kernel(T* __restrict__ out, const T* __restrict__ in, I n, int64_t in_stride, int64_t out_stride,
                            I chunks_per_row, I chunks) {
  using A = at::opmath_type<T>;
  constexpr int N = Pack<T>::N;
  for (I idx = blockIdx.x * I(blockDim.x) + threadIdx.x; idx < chunks; idx += I(gridDim.x) * blockDim.x) {
    const I row = chunks_per_row == chunks ? I(0) : idx / chunks_per_row;
    const I i0 = (idx - row * chunks_per_row) * N;
    const T* x = in + row * in_stride + i0;
    T* y = out + row * out_stride + i0;
    if (VEC && i0 + N <= n) {
      const Pack<T> p = kh::cuda::load_pack(x);
      Pack<T> o;
#pragma unroll
      for (int j = 0; j < N; ++j) o.v[j] = static_cast<T>(kh::cuda::gelu_for<T>(static_cast<A>(p.v[j]), TANH));
      kh::cuda::store_pack(y, o);
    } else {
      for (I j = 0; j < N && i0 + j < n; ++j) y[j] = static_cast<T>(kh::cuda::gelu_for<T>(static_cast<A>(x[j]), TANH));
    }
  }
}

// A contiguous tensor on a small grid: W elements a thread (part of a pack), one chunk each, no loop.
template <typename T, int W, bool TANH>
__global__ void gelu_small_grid_kernel(T* __restrict__ out, const T* __restrict__ in, int chunks) {
  using A = at::opmath_type<T>;
  const int chunk = blockIdx.x * blockDim.x + threadIdx.x;
  if (chunk >= chunks) return;
  T v[W];
  kh::cuda::load_elements<T, W>(v, in + chunk * W);
#pragma unroll
  for (int j = 0; j < W; ++j) v[j] = static_cast<T>(kh::cuda::gelu_for<T>(static_cast<A>(v[j]), TANH));
  kh::cuda::store_elements<T, W>(out + chunk * W, v);
}

// Bytes a thread on small grids: 8 (four 16-bit elements), as LTX RoPE's half packs: shorter than a
// whole pack a thread at nearly every such shape; four bytes was longer at the larger ones
// (bench/gpu/NOTES.md, "GEGLU and GELU-tanh").
#ifndef KH_GELU_SMALL_GRID_BYTES  // a build option only for the benchmark's comparison: 0 (off), 4 or 8
#define KH_GELU_SMALL_GRID_BYTES 8
#endif

// Launches gelu_small_grid_kernel on a contiguous tensor of n elements where it applies (16-bit T,
// n a multiple of the chunk, and a small_pack_grid of whole packs, pack_grid blocks); false where it
// does not.
template <typename T>
bool gelu_small_grid(T* out, const T* in, int64_t n, unsigned pack_grid, int threads, bool tanh, cudaStream_t stream) {
  if constexpr (KH_GELU_SMALL_GRID_BYTES == 0 || sizeof(T) != 2) {
    return false;
  } else {
    constexpr int W = KH_GELU_SMALL_GRID_BYTES / sizeof(T);
    if (n % W != 0 || n / W > INT32_MAX || !kh::cuda::small_pack_grid(pack_grid)) return false;
    const int chunks = static_cast<int>(n / W);
    const unsigned blocks = static_cast<unsigned>((chunks + threads - 1) / threads);
    if (tanh) {
      gelu_small_grid_kernel<T, W, true><<<blocks, threads, 0, stream>>>(out, in, chunks);
    } else {
      gelu_small_grid_kernel<T, W, false><<<blocks, threads, 0, stream>>>(out, in, chunks);
    }
    return true;
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
    auto go = [&](auto vec_tag, auto tanh_tag, auto index) {
      using I = decltype(index);
      gelu_kernel<scalar_t, decltype(vec_tag)::value, decltype(tanh_tag)::value, I>
          <<<grid, threads, 0, kh::cuda::stream_of(input)>>>(yo.mutable_data_ptr<scalar_t>(),
                                                             x.const_data_ptr<scalar_t>(), I(n), x.stride(0),
                                                             yo.stride(0), I(per_row), I(chunks));
    };
    if (vec && rows == 1 &&
        gelu_small_grid(yo.mutable_data_ptr<scalar_t>(), x.const_data_ptr<scalar_t>(), n, grid, threads,
                        approximate_tanh, kh::cuda::stream_of(input))) {
      C10_CUDA_KERNEL_LAUNCH_CHECK();
      return;
    }
    auto with_tanh = [&](auto vec_tag, auto index) {
      approximate_tanh ? go(vec_tag, std::true_type{}, index) : go(vec_tag, std::false_type{}, index);
    };
    auto with_vec = [&](auto index) { vec ? with_tanh(std::true_type{}, index) : with_tanh(std::false_type{}, index); };
    // 32-bit indices while every index (and the grid-stride step past the end) fits.
    if (std::max(n + N, chunks + int64_t(grid) * threads) < (int64_t(1) << 31)) {
      with_vec(int32_t{});
    } else {
      with_vec(int64_t{});
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
  y.finish();
}

}  // namespace

void gelu_tanh(at::Tensor& out, const at::Tensor& input) {
  gelu_cuda("gelu_tanh", out, input, true);
}

void gelu_erf(at::Tensor& out, const at::Tensor& input) {
  gelu_cuda("gelu", out, input, false);
}
