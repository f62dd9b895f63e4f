#include "torch_binding.h"

#include "registration.h"

namespace {
// Shape-only implementation for torch.compile's fake tensors: `out` is preallocated by the
// caller, so there is nothing to compute.
void rms_norm_meta(torch::Tensor&, const torch::Tensor&, const std::optional<torch::Tensor>&, double) {}
}  // namespace

TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, ops) {
  ops.def("rms_norm(Tensor! out, Tensor input, Tensor? weight, float eps) -> ()");
#if defined(CPU_KERNEL)
  ops.impl("rms_norm", torch::kCPU, &rms_norm);
#elif defined(CUDA_KERNEL)
  ops.impl("rms_norm", torch::kCUDA, &rms_norm);
#endif
  ops.impl("rms_norm", torch::kMeta, &rms_norm_meta);
}

REGISTER_EXTENSION(TORCH_EXTENSION_NAME)
