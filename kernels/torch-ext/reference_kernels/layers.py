"""Layers for `kernels.kernelize` (the kernels package's layer rules).

Each layer is a stateless nn.Module: no __init__, no members besides `has_backward` and
`can_torch_compile`, and a `forward` with the signature of the forward it replaces, reading the
replaced module's own attributes. None of the ops has a backward, so has_backward is False and
kernelize keeps the original forward in training mode.
"""

import torch
from torch import nn

from . import apply_rotary_pos_emb, geglu, gelu, rms_norm


class RMSNorm(nn.Module):
    """For transformers' `@use_kernel_forward_from_hub("RMSNorm")` modules (Qwen3RMSNorm, LlamaRMSNorm):
    reads self.weight and self.variance_epsilon."""

    has_backward = False
    can_torch_compile = True

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return rms_norm(hidden_states, self.weight, self.variance_epsilon)


class DiffusersRMSNorm(nn.Module):
    """For diffusers' RMSNorm (self.weight may be None, self.eps); without bias."""

    has_backward = False
    can_torch_compile = True

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return rms_norm(hidden_states, self.weight, self.eps)


class RotaryPosEmb(nn.Module):
    """For transformers' `rotary_pos_emb` (apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1))."""

    has_backward = False
    can_torch_compile = True

    def forward(self, q, k, cos, sin, unsqueeze_dim=1):
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
