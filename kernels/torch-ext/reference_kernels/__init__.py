"""kernelhub reference kernels: RMSNorm, RoPE, GEGLU/GELU and AdaLN for CPU and CUDA.

Each function allocates its output (unless `out` is given) and calls the op of the same name in
`torch.ops.<namespace>`; the ops themselves write into caller-provided tensors, like vLLM's and
kernel-builder's, and have fake implementations, so `torch.compile(fullgraph=True)` traces through.
"""

from typing import Optional, Tuple

import torch

from ._ops import ops


def rms_norm(
    input: torch.Tensor,
    weight: Optional[torch.Tensor] = None,
    eps: float = 1e-6,
    out: Optional[torch.Tensor] = None,
) -> torch.Tensor:
    """RMSNorm with Qwen3RMSNorm semantics (fp32 accumulation, cast, then weight multiply)."""
    if out is None:
        out = torch.empty_like(input)
    ops.rms_norm(out, input, weight, eps)
    return out


def fused_add_rms_norm(
    input: torch.Tensor, residual: torch.Tensor, weight: Optional[torch.Tensor] = None, eps: float = 1e-6
) -> Tuple[torch.Tensor, torch.Tensor]:
    """In place: residual += input; input = rms_norm(residual). Returns (input, residual)."""
    ops.fused_add_rms_norm(input, residual, weight, eps)
    return input, residual


def rotary_embedding(
    positions: torch.Tensor,
    query: torch.Tensor,
    key: Optional[torch.Tensor],
    head_size: int,
    cos_sin_cache: torch.Tensor,
    is_neox: bool = True,
) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
    """vLLM's rotary_embedding, in place on query (and key). is_neox=False is GPT-J interleaved."""
    ops.rotary_embedding(positions, query, key, head_size, cos_sin_cache, is_neox)
    return query, key


def apply_rotary_pos_emb(
    q: torch.Tensor,
    k: torch.Tensor,
    cos: torch.Tensor,
    sin: torch.Tensor,
    unsqueeze_dim: int = 1,
) -> Tuple[torch.Tensor, torch.Tensor]:
    """transformers' apply_rotary_pos_emb (rotate_half); returns new (q_embed, k_embed)."""
    q_out = torch.empty_like(q)
    k_out = torch.empty_like(k)
    ops.apply_rotary_pos_emb(q_out, k_out, q, k, cos, sin, unsqueeze_dim)
    return q_out, k_out


def ltx_rotary_emb(
    q: torch.Tensor,
    cos: torch.Tensor,
    sin: torch.Tensor,
    k: Optional[torch.Tensor] = None,
) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
    """diffusers' LTX-Video apply_rotary_emb(x, (cos, sin)) for q and, when given, k in one call."""
    q_out = torch.empty_like(q)
    k_out = None if k is None else torch.empty_like(k)
    ops.ltx_rotary_emb(q_out, k_out, q, k, cos, sin)
    return q_out, k_out


def apply_rotary_emb(x: torch.Tensor, freqs: Tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
    """Drop-in for diffusers.models.transformers.transformer_ltx.apply_rotary_emb."""
    return ltx_rotary_emb(x, freqs[0], freqs[1])[0]


def _gated_out(input: torch.Tensor, out: Optional[torch.Tensor]) -> torch.Tensor:
    if out is None:
        out = torch.empty(input.shape[:-1] + (input.shape[-1] // 2,), dtype=input.dtype, device=input.device)
    return out


def geglu(
    input: torch.Tensor, approximate: str = "none", gate_first: bool = False, out: Optional[torch.Tensor] = None
) -> torch.Tensor:
    """gelu(gate) * up from [..., 2d]. Default is diffusers' GEGLU (value first, gate second, erf);
    gate_first=True is vLLM's order; approximate="tanh" the tanh GELU."""
    if approximate not in ("none", "tanh"):
        raise ValueError(f"approximate must be 'none' or 'tanh', got {approximate!r}")
    out = _gated_out(input, out)
    ops.geglu(out, input, approximate == "tanh", gate_first)
    return out


def gelu_and_mul(out: torch.Tensor, input: torch.Tensor) -> None:
    """vLLM: out = gelu(input[..., :d]) * input[..., d:] (exact erf GELU)."""
    ops.gelu_and_mul(out, input)


def gelu_tanh_and_mul(out: torch.Tensor, input: torch.Tensor) -> None:
    """vLLM: out = gelu_tanh(input[..., :d]) * input[..., d:]."""
    ops.gelu_tanh_and_mul(out, input)


def gelu(input: torch.Tensor, approximate: str = "none", out: Optional[torch.Tensor] = None) -> torch.Tensor:
    """F.gelu(input, approximate=...) for "none" (erf) and "tanh"."""
    if out is None:
        out = torch.empty_like(input)
    if approximate == "tanh":
        ops.gelu_tanh(out, input)
    elif approximate == "none":
        ops.gelu(out, input)
    else:
        raise ValueError(f"approximate must be 'none' or 'tanh', got {approximate!r}")
    return out


def gelu_tanh(input: torch.Tensor, out: Optional[torch.Tensor] = None) -> torch.Tensor:
    """F.gelu(input, approximate="tanh") (LTX-Video's feed-forward activation)."""
    return gelu(input, "tanh", out)


def adaln(
    input: torch.Tensor,
    scale: torch.Tensor,
    shift: torch.Tensor,
    weight: Optional[torch.Tensor] = None,
    eps: float = 1e-6,
    norm: str = "rms",
    out: Optional[torch.Tensor] = None,
) -> torch.Tensor:
    """norm(input) * (1 + scale) + shift; norm "rms" (diffusers RMSNorm) or "layer" (LayerNorm,
    no affine), times weight when given. scale/shift [B, H], [B, 1, H] or [B, S, H]."""
    if norm not in ("rms", "layer"):
        raise ValueError(f"norm must be 'rms' or 'layer', got {norm!r}")
    if out is None:
        out = torch.empty_like(input)
    ops.adaln(out, input, weight, scale, shift, eps, norm == "layer")
    return out


from . import layers  # noqa: E402  (layers uses the functions above)

__all__ = [
    "adaln",
    "apply_rotary_emb",
    "apply_rotary_pos_emb",
    "fused_add_rms_norm",
    "geglu",
    "gelu",
    "gelu_and_mul",
    "gelu_tanh",
    "gelu_tanh_and_mul",
    "layers",
    "ltx_rotary_emb",
    "rms_norm",
    "rotary_embedding",
]
