// The ATen shim's CUDA side (kh_shim/tensor.h, cuda.h): copies between strided layouts on the
// device, and allocations ordered on the stream TVM-FFI holds for the device.
#include <tvm/ffi/extra/c_env_api.h>

#include <string>

#include "kh_shim/cuda.h"

namespace kh_shim {

namespace {

constexpr int kMaxDims = 8;

struct Layout {
  int dims;
  std::int64_t sizes[kMaxDims];
  std::int64_t dst_strides[kMaxDims];
  std::int64_t src_strides[kMaxDims];
};

template <typename Word>
__global__ void strided_copy_kernel(Word* dst, const Word* src, std::int64_t n, Layout layout) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    std::int64_t rest = i, d_off = 0, s_off = 0;
    for (int d = layout.dims - 1; d >= 0; --d) {
      const std::int64_t index = rest % layout.sizes[d];
      rest /= layout.sizes[d];
      d_off += index * layout.dst_strides[d];
      s_off += index * layout.src_strides[d];
    }
    dst[d_off] = src[s_off];
  }
}

cudaStream_t stream_for(int device) {
  return static_cast<cudaStream_t>(TVMFFIEnvGetStream(kDLCUDA, device < 0 ? 0 : device));
}

}  // namespace

void fail_cuda(cudaError_t error, const char* what) {
  fail(std::string("CUDA error: ") + cudaGetErrorString(error) + " (" + what + ")");
}

bool has_cuda() {
  return true;
}

void cuda_copy(const at::Tensor& dst, const at::Tensor& src) {
  const std::int64_t n = dst.numel();
  if (n == 0) return;
  TORCH_CHECK(dst.dim() <= kMaxDims, "copy_ of a ", dst.dim(), "-dimensional CUDA tensor (at most ", kMaxDims, ")");
  Layout layout{};
  layout.dims = static_cast<int>(dst.dim());
  for (int d = 0; d < layout.dims; ++d) {
    layout.sizes[d] = dst.size(d);
    layout.dst_strides[d] = dst.stride(d);
    layout.src_strides[d] = src.stride(d);
  }
  const c10::cuda::CUDAGuard guard(dst.device());
  const cudaStream_t stream = stream_for(dst.get_device());
  const unsigned blocks = static_cast<unsigned>(std::min<std::int64_t>((n + 255) / 256, 65535));
  switch (dst.element_size()) {
    case 1:
      strided_copy_kernel<<<blocks, 256, 0, stream>>>(static_cast<std::uint8_t*>(dst.data_ptr()),
                                                      static_cast<const std::uint8_t*>(src.const_data_ptr()), n,
                                                      layout);
      break;
    case 2:
      strided_copy_kernel<<<blocks, 256, 0, stream>>>(static_cast<std::uint16_t*>(dst.data_ptr()),
                                                      static_cast<const std::uint16_t*>(src.const_data_ptr()), n,
                                                      layout);
      break;
    case 4:
      strided_copy_kernel<<<blocks, 256, 0, stream>>>(static_cast<std::uint32_t*>(dst.data_ptr()),
                                                      static_cast<const std::uint32_t*>(src.const_data_ptr()), n,
                                                      layout);
      break;
    default:
      strided_copy_kernel<<<blocks, 256, 0, stream>>>(static_cast<std::uint64_t*>(dst.data_ptr()),
                                                      static_cast<const std::uint64_t*>(src.const_data_ptr()), n,
                                                      layout);
      break;
  }
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

std::shared_ptr<void> cuda_allocate(std::int64_t bytes, int device) {
  const c10::cuda::CUDAGuard guard(c10::Device(c10::DeviceType::CUDA, device));
  const cudaStream_t stream = stream_for(device);
  void* data = nullptr;
  C10_CUDA_CHECK(cudaMallocAsync(&data, static_cast<std::size_t>(bytes), stream));
  // Freed in stream order after the kernels that use it, on the stream it was allocated on.
  return std::shared_ptr<void>(data, [stream](void* p) { (void)cudaFreeAsync(p, stream); });
}

}  // namespace kh_shim
