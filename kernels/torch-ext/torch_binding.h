// The ops of the package. Every backend (kernel_src/<op>/<op>_{cpu.cpp,cuda.cu}) defines these;
// torch_binding.cpp registers them with their schemas. All write into caller-provided tensors
// (kernel-builder / vLLM convention), so torch.compile needs only a no-op fake implementation.
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>

// RMSNorm with Qwen3RMSNorm semantics: fp32 accumulation of mean(x^2), x * rsqrt(mean + eps)
// cast back to the input dtype, then multiplied by `weight` (when given) in the input dtype.
void rms_norm(at::Tensor& out, const at::Tensor& input, const std::optional<at::Tensor>& weight, double eps);

// In place, vLLM's contract: residual <- input + residual (rounded to the dtype, as an eager add
// does), input <- rms_norm(residual, weight, eps) with the semantics of rms_norm.
void fused_add_rms_norm(at::Tensor& input, at::Tensor& residual, const std::optional<at::Tensor>& weight,
                        double eps);

// vLLM's rotary_embedding, in place: query/key [T, H*D] or [T, H, D] (T = positions.numel()),
// cos_sin_cache [max_position, rot_dim] = cat(cos, sin); the first rot_dim channels of each head
// rotate, NeoX halves (is_neox) or GPT-J adjacent pairs. fp32 math, one rounding.
void rotary_embedding(const at::Tensor& positions, at::Tensor& query, const std::optional<at::Tensor>& key,
                      int64_t head_size, const at::Tensor& cos_sin_cache, bool is_neox);

// transformers' apply_rotary_pos_emb (rotate_half, NeoX halves) for q and k together:
// q [B, Hq, S, D] (unsqueeze_dim 1) or [B, S, Hq, D] (unsqueeze_dim 2), likewise k, cos/sin
// [B or 1, S, D]. Rounds where eager rounds: q*cos, rotate_half(q)*sin and their sum.
void apply_rotary_pos_emb(at::Tensor& q_out, at::Tensor& k_out, const at::Tensor& q, const at::Tensor& k,
                          const at::Tensor& cos, const at::Tensor& sin, int64_t unsqueeze_dim);

// diffusers' LTX-Video apply_rotary_emb on [B, S, C] (all heads at once, adjacent pairs) with
// fp32 cos/sin [B or 1, S, C]: (x*cos + rot(x)*sin) in fp32, one rounding; k optional.
void ltx_rotary_emb(at::Tensor& q_out, const std::optional<at::Tensor>& k_out, const at::Tensor& q,
                    const std::optional<at::Tensor>& k, const at::Tensor& cos, const at::Tensor& sin);

// Gated GELU from input [..., 2d] into out [..., d]: gelu(gate) * up, gelu rounded to the dtype
// before the product (as eager and vLLM do). gate_first: gate = input[..., :d] (vLLM order);
// else gate = input[..., d:] (diffusers GEGLU order).
void geglu(at::Tensor& out, const at::Tensor& input, bool approximate_tanh, bool gate_first);
void gelu_and_mul(at::Tensor& out, const at::Tensor& input);
void gelu_tanh_and_mul(at::Tensor& out, const at::Tensor& input);

// Plain GELU, elementwise: tanh approximation (LTX-Video's feed-forward) and exact erf.
void gelu_tanh(at::Tensor& out, const at::Tensor& input);
void gelu_erf(at::Tensor& out, const at::Tensor& input);

// AdaLN modulation: out = norm(x) * (1 + scale) + shift, x [B, S, H] (or [B, H]); norm is RMSNorm
// or, with layer_norm, LayerNorm without affine, times weight when given; scale/shift [B, H]
// (per sample), [B, 1, H] or [B, S, H] (per token; LTX's unbound scale_shift_table views work).
// Each step rounds to the dtype as diffusers' eager code does.
void adaln(at::Tensor& out, const at::Tensor& input, const std::optional<at::Tensor>& weight,
           const at::Tensor& scale, const at::Tensor& shift, double eps, bool layer_norm);
