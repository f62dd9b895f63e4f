"""Layers for `kernels.kernelize` (the kernels package's layer rules).

Each layer is a stateless nn.Module: no __init__, no members besides `has_backward` and
`can_torch_compile`, and a `forward` with the signature of the forward it replaces, reading the
replaced module's own attributes. None of the ops has a backward, so has_backward is False and
kernelize keeps the original forward in training mode.

Under torch.compile, the norm and rotary layers hand small inputs (at most COMPILE_NATIVE_MAX_BYTES)
to inductor as the plain torch code of the module they replace, and keep our kernels for larger
ones. A custom op is a fusion boundary for inductor: at launch-bound sizes (a decode step), inductor
folds the residual add, the casts, the norm and the rotary into fewer kernels than our ops can be,
and a saved launch is worth more there than a faster one (Qwen3-8B decode under compile: 8.82
ms/token with our ops everywhere against 7.86 without them; bench/README.md "End to end"). vLLM's
compiled models make the same choice for their norms. Without torch.compile our kernels always run.
"""

import torch
from torch import nn

from . import apply_rotary_pos_emb, geglu, gelu, rms_norm

# Inputs of at most this many bytes are launch-bound (the kernel-performance issue's 1 MB): under
# torch.compile they go to inductor (see above). 1 MB is 128 tokens of a 4096-wide bf16 row.
COMPILE_NATIVE_MAX_BYTES = 1 << 20


def _inductor_takes(x: torch.Tensor) -> bool:
    """True while torch.compile traces a launch-bound input (a guard on its size under dynamic shapes)."""
    return torch.compiler.is_compiling() and x.numel() * x.element_size() <= COMPILE_NATIVE_MAX_BYTES


def _rms_norm_native(x: torch.Tensor, weight, eps: float) -> torch.Tensor:
    # rms_norm's semantics (Qwen3RMSNorm's code): fp32 statistics, cast, then the weight multiply.
    h = x.to(torch.float32)
    h = (h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype)
    return h if weight is None else weight * h


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class RMSNorm(nn.Module):
    """For transformers' `@use_kernel_forward_from_hub("RMSNorm")` modules (Qwen3RMSNorm, LlamaRMSNorm):
    reads self.weight and self.variance_epsilon."""

    has_backward = False
    can_torch_compile = True

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        if _inductor_takes(hidden_states):
            return _rms_norm_native(hidden_states, self.weight, self.variance_epsilon)
        return rms_norm(hidden_states, self.weight, self.variance_epsilon)


class DiffusersRMSNorm(nn.Module):
    """For diffusers' RMSNorm (self.weight may be None, self.eps); without bias."""

    has_backward = False
    can_torch_compile = True

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        if _inductor_takes(hidden_states):
            return _rms_norm_native(hidden_states, self.weight, self.eps)
        return rms_norm(hidden_states, self.weight, self.eps)


class RotaryPosEmb(nn.Module):
    """For transformers' `rotary_pos_emb` (apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1))."""

    has_backward = False
    can_torch_compile = True

    def forward(self, q, k, cos, sin, unsqueeze_dim=1):
        if _inductor_takes(q):
            cos, sin = cos.unsqueeze(unsqueeze_dim), sin.unsqueeze(unsqueeze_dim)
            return q * cos + _rotate_half(q) * sin, k * cos + _rotate_half(k) * sin
        return apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim)


class GeluAndMul(nn.Module):
    """vLLM's GeluAndMul: gelu(x[..., :d]) * x[..., d:], exact GELU."""

    has_backward = False
    can_torch_compile = True

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return geglu(x, "none", gate_first=True)


class GeluTanhAndMul(nn.Module):
    """vLLM's GeluAndMul(approximate="tanh"): gelu_tanh(x[..., :d]) * x[..., d:]."""

    has_backward = False
    can_torch_compile = True

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return geglu(x, "tanh", gate_first=True)


class GEGLU(nn.Module):
    """For diffusers' GEGLU: proj, then value * gelu(gate) with (value, gate) = chunk(2)."""

    has_backward = False
    can_torch_compile = True

    def forward(self, hidden_states, *args, **kwargs):
        return geglu(self.proj(hidden_states), "none", gate_first=False)


class GELU(nn.Module):
    """For diffusers' GELU: proj, then gelu with self.approximate ("none" or "tanh")."""

    has_backward = False
    can_torch_compile = True

    def forward(self, hidden_states):
        return gelu(self.proj(hidden_states), self.approximate)


__all__ = ["DiffusersRMSNorm", "GEGLU", "GELU", "GeluAndMul", "GeluTanhAndMul", "RMSNorm", "RotaryPosEmb"]
