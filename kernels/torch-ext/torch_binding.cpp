#include "torch_binding.h"

#include "../kernel_src/common/adaln_args.h"
#include "../kernel_src/common/gelu_args.h"
#include "../kernel_src/common/ltx_rotary_args.h"
#include "../kernel_src/common/rotary_args.h"
#include "../kernel_src/common/rotary_pos_emb_args.h"
#include "registration.h"

namespace {
// Fake (Meta) implementations for torch.compile: every op writes into tensors its caller allocated,
// so there is nothing to compute; they run the backends' argument checks so that a bad call fails
// while tracing with the same message as at run time.
void rms_norm_meta(at::Tensor& out, const at::Tensor& input, const std::optional<at::Tensor>& weight, double) {
  kh::check_norm_args("rms_norm", "out", out, input, weight);
}
void fused_add_rms_norm_meta(at::Tensor& input, at::Tensor& residual, const std::optional<at::Tensor>& weight,
                             double) {
  kh::check_norm_args("fused_add_rms_norm", "residual", residual, input, weight);
}
void rotary_embedding_meta(const at::Tensor& positions, at::Tensor& query, const std::optional<at::Tensor>& key,
                           int64_t head_size, const at::Tensor& cos_sin_cache, bool) {
  kh::check_rotary_embedding_args(positions, query, key, head_size, cos_sin_cache);
}
void apply_rotary_pos_emb_meta(at::Tensor& q_out, at::Tensor& k_out, const at::Tensor& q, const at::Tensor& k,
                               const at::Tensor& cos, const at::Tensor& sin, int64_t unsqueeze_dim) {
  kh::check_rotary_pos_emb_args(q_out, k_out, q, k, cos, sin, unsqueeze_dim);
}
void ltx_rotary_emb_meta(at::Tensor& q_out, const std::optional<at::Tensor>& k_out, const at::Tensor& q,
                         const std::optional<at::Tensor>& k, const at::Tensor& cos, const at::Tensor& sin) {
  kh::check_ltx_rotary_args(q_out, k_out, q, k, cos, sin);
}
void geglu_meta(at::Tensor& out, const at::Tensor& input, bool, bool) { kh::check_geglu_args(out, input); }
void gelu_and_mul_meta(at::Tensor& out, const at::Tensor& input) { kh::check_geglu_args(out, input); }
void gelu_meta(at::Tensor& out, const at::Tensor& input) { kh::check_gelu_args("gelu", out, input); }
void adaln_meta(at::Tensor& out, const at::Tensor& input, const std::optional<at::Tensor>& weight,
                const at::Tensor& scale, const at::Tensor& shift, double, bool) {
  kh::check_adaln_args(out, input, weight);
  const at::Tensor x = kh::as_bsh(input);
  kh::modulation_view("scale", scale, x);
  kh::modulation_view("shift", shift, x);
}
}  // namespace

#if defined(CPU_KERNEL)
#define KH_IMPL(ops, name, fn) ops.impl(name, c10::kCPU, &fn)
#elif defined(CUDA_KERNEL)
#define KH_IMPL(ops, name, fn) ops.impl(name, c10::kCUDA, &fn)
#endif

TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, ops) {
  ops.def("rms_norm(Tensor! out, Tensor input, Tensor? weight, float eps) -> ()");
  KH_IMPL(ops, "rms_norm", rms_norm);
  ops.impl("rms_norm", c10::kMeta, &rms_norm_meta);

  ops.def("fused_add_rms_norm(Tensor! input, Tensor! residual, Tensor? weight, float eps) -> ()");
  KH_IMPL(ops, "fused_add_rms_norm", fused_add_rms_norm);
  ops.impl("fused_add_rms_norm", c10::kMeta, &fused_add_rms_norm_meta);

  ops.def(
      "rotary_embedding(Tensor positions, Tensor! query, Tensor!? key, int head_size, Tensor cos_sin_cache, "
      "bool is_neox) -> ()");
  KH_IMPL(ops, "rotary_embedding", rotary_embedding);
  ops.impl("rotary_embedding", c10::kMeta, &rotary_embedding_meta);

  ops.def(
      "apply_rotary_pos_emb(Tensor! q_out, Tensor! k_out, Tensor q, Tensor k, Tensor cos, Tensor sin, "
      "int unsqueeze_dim) -> ()");
  KH_IMPL(ops, "apply_rotary_pos_emb", apply_rotary_pos_emb);
  ops.impl("apply_rotary_pos_emb", c10::kMeta, &apply_rotary_pos_emb_meta);

  ops.def("ltx_rotary_emb(Tensor! q_out, Tensor!? k_out, Tensor q, Tensor? k, Tensor cos, Tensor sin) -> ()");
  KH_IMPL(ops, "ltx_rotary_emb", ltx_rotary_emb);
  ops.impl("ltx_rotary_emb", c10::kMeta, &ltx_rotary_emb_meta);

  ops.def("geglu(Tensor! out, Tensor input, bool approximate_tanh, bool gate_first) -> ()");
  KH_IMPL(ops, "geglu", geglu);
  ops.impl("geglu", c10::kMeta, &geglu_meta);

  ops.def("gelu_and_mul(Tensor! out, Tensor input) -> ()");
  KH_IMPL(ops, "gelu_and_mul", gelu_and_mul);
  ops.impl("gelu_and_mul", c10::kMeta, &gelu_and_mul_meta);

  ops.def("gelu_tanh_and_mul(Tensor! out, Tensor input) -> ()");
  KH_IMPL(ops, "gelu_tanh_and_mul", gelu_tanh_and_mul);
  ops.impl("gelu_tanh_and_mul", c10::kMeta, &gelu_and_mul_meta);

  ops.def("gelu_tanh(Tensor! out, Tensor input) -> ()");
  KH_IMPL(ops, "gelu_tanh", gelu_tanh);
  ops.impl("gelu_tanh", c10::kMeta, &gelu_meta);

  ops.def("gelu(Tensor! out, Tensor input) -> ()");
  KH_IMPL(ops, "gelu", gelu_erf);
  ops.impl("gelu", c10::kMeta, &gelu_meta);

  ops.def(
      "adaln(Tensor! out, Tensor input, Tensor? weight, Tensor scale, Tensor shift, float eps, bool layer_norm) "
      "-> ()");
  KH_IMPL(ops, "adaln", adaln);
  ops.impl("adaln", c10::kMeta, &adaln_meta);
}

REGISTER_EXTENSION(TORCH_EXTENSION_NAME)
