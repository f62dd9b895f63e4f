// Gated GELU on CUDA: out[r, i] = gelu(gate[r, i]) * up[r, i] from input [R, 2d], both half orders.
// Each thread takes a chunk of 16 bytes of one output row: vector loads of gate and up where the
// rows are whole, aligned chunks, else element by element. fp16/bf16 use the fast tanh
// form of gelu_fast.cuh; indices are 32-bit where they fit.
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

template <typename T, bool TANH>
__device__ __forceinline__ T gated(T gate, T up) {
  using A = at::opmath_type<T>;
  // gelu(gate) rounded to the dtype before the product, as eager and vLLM do.
  const A g = kh::round_to<T>(kh::cuda::gelu_for<T>(static_cast<A>(gate), TANH));
  return static_cast<T>(g * static_cast<A>(up));
}

// One thread per 16-byte output chunk, near the copy bandwidth; two chunks a thread (all loads
// first) took more registers and ran slower. VEC kernels run only where every row is whole chunks,
// so they hold no element-by-element tail. TANH is a template argument so that a kernel holds one
// gelu: less than half the code, one straight path, and a shorter launch-bound kernel.
// L2_LAST (VEC only): gate and up read with an L2 evict-last policy (load_pack_l2_last), where the
// input and the output overflow L2, which measured shorter there (GELU, one input, lost with it).
// A template argument, not a flag: as a run-time flag the launch-bound kernels lost time.
// The numbers: bench/gpu/NOTES.md, "GEGLU and GELU-tanh".
template <typename T, bool VEC, bool TANH, typename I, bool L2_LAST = false>
__global__ void geglu_kernel(T* __restrict__ out, const T* __restrict__ in, I d, int64_t in_stride, int64_t out_stride,
                             kh::cuda::Divider<I> chunks_per_row, I chunks, bool gate_first) {
  constexpr int N = Pack<T>::N;
  for (I idx = blockIdx.x * I(blockDim.x) + threadIdx.x; idx < chunks; idx += I(gridDim.x) * blockDim.x) {
    const auto rc = chunks_per_row.divmod(idx);
    const I row = static_cast<I>(rc.div), i0 = static_cast<I>(rc.mod) * N;
    const T* x = in + row * in_stride;
    const T* gate = (gate_first ? x : x + d) + i0;
    const T* up = (gate_first ? x + d : x) + i0;
    T* y = out + row * out_stride + i0;
    if constexpr (VEC) {
      Pack<T> g, u;
      if constexpr (L2_LAST) {
        g = kh::cuda::load_pack_l2_last(gate);
        u = kh::cuda::load_pack_l2_last(up);
      } else {
        g = kh::cuda::load_pack(gate);
        u = kh::cuda::load_pack(up);
      }
      Pack<T> o;
#pragma unroll
      for (int j = 0; j < N; ++j) o.v[j] = gated<T, TANH>(g.v[j], u.v[j]);
      kh::cuda::store_pack(y, o);
    } else {
      for (I j = 0; j < N && i0 + j < d; ++j) y[j] = gated<T, TANH>(gate[j], up[j]);
    }
  }
}

}  // namespace

void geglu(at::Tensor& out, const at::Tensor& input, bool approximate_tanh, bool gate_first) {
  kh::check_device("geglu", input, true);
  kh::check_geglu_args(out, input);
  const c10::cuda::CUDAGuard guard(input.device());
  const at::Tensor x = kh::input_view(input, kh::rows_of);
  kh::Output y(out, false, kh::rows_of);
  const int64_t rows = x.size(0), d = x.size(1) / 2;
  if (rows * d == 0) return;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, input.scalar_type(), "geglu_cuda", [&] {
    constexpr int N = Pack<scalar_t>::N;
    at::Tensor& yo = y.get();
    const bool vec =
        d % N == 0 && kh::cuda::pack_aligned(x, {x.stride(0)}) && kh::cuda::pack_aligned(yo, {yo.stride(0)});
    const int64_t per_row = (d + N - 1) / N, chunks = rows * per_row;
    const bool l2_last = kh::cuda::exceeds_l2(3 * rows * d * static_cast<int64_t>(sizeof(scalar_t)));
    const int threads = 256;
    const unsigned grid = kh::cuda::grid_for(chunks, threads);
    // Kernel variants: VEC, TANH, the index type I and L2_LAST (with VEC only).
    auto go = [&](auto vec_tag, auto l2_tag, auto tanh_tag, auto index) {
      using I = decltype(index);
      geglu_kernel<scalar_t, decltype(vec_tag)::value, decltype(tanh_tag)::value, I, decltype(l2_tag)::value>
          <<<grid, threads, 0, kh::cuda::stream_of(input)>>>(
              yo.mutable_data_ptr<scalar_t>(), x.const_data_ptr<scalar_t>(), I(d), x.stride(0), yo.stride(0),
              kh::cuda::Divider<I>(per_row), I(chunks), gate_first);
    };
    auto with_tanh = [&](auto vec_tag, auto l2_tag, auto index) {
      approximate_tanh ? go(vec_tag, l2_tag, std::true_type{}, index) : go(vec_tag, l2_tag, std::false_type{}, index);
    };
    auto with_vec = [&](auto index) {
      using std::false_type, std::true_type;
      if (!vec) return with_tanh(false_type{}, false_type{}, index);
      l2_last ? with_tanh(true_type{}, true_type{}, index) : with_tanh(true_type{}, false_type{}, index);
    };
    // 32-bit indices while every index (and the grid-stride step past the end) fits.
    if (std::max(d + N, chunks + int64_t(grid) * threads) < (int64_t(1) << 31)) {
      with_vec(int32_t{});
    } else {
      with_vec(int64_t{});
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
  y.finish();
}

void gelu_and_mul(at::Tensor& out, const at::Tensor& input) {
  geglu(out, input, false, true);
}

void gelu_tanh_and_mul(at::Tensor& out, const at::Tensor& input) {
  geglu(out, input, true, true);
}
