// The reference kernels' TVM-FFI functions: the ops of torch-ext/torch_binding.cpp, with the same
// arguments in the same order, exported as `<op>_<backend>` (kernel-builder's tvm-ffi convention:
// rms_norm_cpu, rms_norm_cuda) with their signatures (TVM_FFI_DLL_EXPORT_INCLUDE_METADATA). Each
// wraps its DLPack arguments as the ATen shim's tensors (aten_shim/) and calls the same op function
// of kernel_src/ that the torch build registers; a failed check raises a TVM-FFI RuntimeError with
// the op's own message.
#define TVM_FFI_DLL_EXPORT_INCLUDE_METADATA 1
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/optional.h>

#include <optional>

#include "torch_binding.h"

namespace {

using tvm::ffi::Optional;
// DLTensor* rather than TensorView: a DLTensor with compact (null) strides is taken as it is.
using TensorView = DLTensor*;

at::Tensor tensor(const DLTensor* view) {
  TORCH_CHECK(view != nullptr, "a tensor argument is a null pointer");
  return at::Tensor::wrap(*view);
}

std::optional<at::Tensor> optional(const Optional<DLTensor*>& view) {
  if (!view.has_value()) return std::nullopt;
  return tensor(*view);
}

void rms_norm_op(TensorView out, TensorView input, Optional<TensorView> weight, double eps) {
  at::Tensor o = tensor(out);
  rms_norm(o, tensor(input), optional(weight), eps);
}

void fused_add_rms_norm_op(TensorView input, TensorView residual, Optional<TensorView> weight, double eps) {
  at::Tensor x = tensor(input), r = tensor(residual);
  fused_add_rms_norm(x, r, optional(weight), eps);
}

void rotary_embedding_op(TensorView positions, TensorView query, Optional<TensorView> key, int64_t head_size,
                         TensorView cos_sin_cache, bool is_neox) {
  at::Tensor q = tensor(query);
  rotary_embedding(tensor(positions), q, optional(key), head_size, tensor(cos_sin_cache), is_neox);
}

void apply_rotary_pos_emb_op(TensorView q_out, TensorView k_out, TensorView q, TensorView k, TensorView cos,
                             TensorView sin, int64_t unsqueeze_dim) {
  at::Tensor qo = tensor(q_out), ko = tensor(k_out);
  apply_rotary_pos_emb(qo, ko, tensor(q), tensor(k), tensor(cos), tensor(sin), unsqueeze_dim);
}

void ltx_rotary_emb_op(TensorView q_out, Optional<TensorView> k_out, TensorView q, Optional<TensorView> k,
                       TensorView cos, TensorView sin) {
  at::Tensor qo = tensor(q_out);
  ltx_rotary_emb(qo, optional(k_out), tensor(q), optional(k), tensor(cos), tensor(sin));
}

void geglu_op(TensorView out, TensorView input, bool approximate_tanh, bool gate_first) {
  at::Tensor o = tensor(out);
  geglu(o, tensor(input), approximate_tanh, gate_first);
}

// The elementwise ops of one shape: out, input.
template <void (*Op)(at::Tensor&, const at::Tensor&)>
void unary_op(TensorView out, TensorView input) {
  at::Tensor o = tensor(out);
  Op(o, tensor(input));
}

void adaln_op(TensorView out, TensorView input, Optional<TensorView> weight, TensorView scale, TensorView shift,
              double eps, bool layer_norm) {
  at::Tensor o = tensor(out);
  adaln(o, tensor(input), optional(weight), tensor(scale), tensor(shift), eps, layer_norm);
}

}  // namespace

// Each op, exported as <op>_<backend> (TVM_FFI_DLL_EXPORT_TYPED_FUNC pastes the name it is given,
// so the backend is pasted on first).
#define KH_OPS(X)                                   \
  X(rms_norm, rms_norm_op)                          \
  X(fused_add_rms_norm, fused_add_rms_norm_op)      \
  X(rotary_embedding, rotary_embedding_op)          \
  X(apply_rotary_pos_emb, apply_rotary_pos_emb_op)  \
  X(ltx_rotary_emb, ltx_rotary_emb_op)              \
  X(geglu, geglu_op)                                \
  X(gelu_and_mul, unary_op<gelu_and_mul>)           \
  X(gelu_tanh_and_mul, unary_op<gelu_tanh_and_mul>) \
  X(gelu_tanh, unary_op<gelu_tanh>)                 \
  X(gelu, unary_op<gelu_erf>)                       \
  X(adaln, adaln_op)
#if defined(CPU_KERNEL)
#define KH_EXPORT(name, fn) TVM_FFI_DLL_EXPORT_TYPED_FUNC(name##_cpu, fn);
#elif defined(CUDA_KERNEL)
#define KH_EXPORT(name, fn) TVM_FFI_DLL_EXPORT_TYPED_FUNC(name##_cuda, fn);
#endif
KH_OPS(KH_EXPORT)
