"""kernelhub reference kernels (tvm-ffi build): RMSNorm, RoPE, GEGLU/GELU and AdaLN for CPU and CUDA.

The same functions, arguments and results as the torch build's package, over the TVM-FFI functions
of this variant's library (`<op>_cpu` or `<op>_cuda`, called through `tvm_ffi`). Tensors are any
DLPack arrays (torch tensors included; outputs are allocated like the input: torch.empty_like for a
torch tensor, else the array's own namespace); a torch CUDA tensor runs on torch's current stream.
The ops are not torch custom ops, so torch.compile traces around them (a graph break), and the
layers (for kernels' kernelize) are there when torch is installed.
"""

from typing import Any, Optional, Tuple

from ._ops import ops

_DEVICE_NAMES = {1: "cpu", 2: "cuda", 10: "rocm"}  # DLPack device types


def _function(op: str, tensor: Any):
    """The TVM-FFI function of `op` for `tensor`'s device: `<op>_cpu`, `<op>_cuda`."""
    device_type = tensor.__dlpack_device__()[0]
    device = _DEVICE_NAMES.get(int(device_type), f"DLPack device type {int(device_type)}")
    fn = getattr(ops, f"{op}_{device}", None)
    if fn is None:
        have = [d for d in _DEVICE_NAMES.values() if getattr(ops, f"{op}_{d}", None) is not None]
        raise NotImplementedError(
            f"{op}: this build of the kernel has no {device} implementation (it has: {', '.join(have) or 'none'})"
        )
    return fn


def _empty_like(tensor: Any, shape: Optional[Tuple[int, ...]] = None) -> Any:
    """An uninitialised array like `tensor` (its dtype and device), of `shape` when given."""
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None and isinstance(tensor, torch.Tensor):
        if shape is None:
            return torch.empty_like(tensor)
        return torch.empty(shape, dtype=tensor.dtype, device=tensor.device)
    xp = tensor.__array_namespace__()
    return xp.empty_like(tensor) if shape is None else xp.empty(shape, dtype=tensor.dtype, device=tensor.device)


def rms_norm(input, weight=None, eps: float = 1e-6, out=None):
    """RMSNorm with Qwen3RMSNorm semantics (fp32 accumulation, cast, then weight multiply)."""
    if out is None:
        out = _empty_like(input)
    _function("rms_norm", input)(out, input, weight, eps)
    return out


def fused_add_rms_norm(input, residual, weight=None, eps: float = 1e-6):
    """In place: residual += input; input = rms_norm(residual). Returns (input, residual)."""
    _function("fused_add_rms_norm", input)(input, residual, weight, eps)
    return input, residual


def rotary_embedding(positions, query, key, head_size: int, cos_sin_cache, is_neox: bool = True):
    """vLLM's rotary_embedding, in place on query (and key). is_neox=False is GPT-J interleaved."""
    _function("rotary_embedding", query)(positions, query, key, head_size, cos_sin_cache, is_neox)
    return query, key


def apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim: int = 1):
    """transformers' apply_rotary_pos_emb (rotate_half); returns new (q_embed, k_embed)."""
    q_out = _empty_like(q)
    k_out = _empty_like(k)
    _function("apply_rotary_pos_emb", q)(q_out, k_out, q, k, cos, sin, unsqueeze_dim)
    return q_out, k_out


def ltx_rotary_emb(q, cos, sin, k=None):
    """diffusers' LTX-Video apply_rotary_emb(x, (cos, sin)) for q and, when given, k in one call."""
    q_out = _empty_like(q)
    k_out = None if k is None else _empty_like(k)
    _function("ltx_rotary_emb", q)(q_out, k_out, q, k, cos, sin)
    return q_out, k_out


def apply_rotary_emb(x, freqs):
    """Drop-in for diffusers.models.transformers.transformer_ltx.apply_rotary_emb."""
    return ltx_rotary_emb(x, freqs[0], freqs[1])[0]


def _gated_out(input, out):
    if out is None:
        out = _empty_like(input, tuple(input.shape[:-1]) + (input.shape[-1] // 2,))
    return out


def geglu(input, approximate: str = "none", gate_first: bool = False, out=None):
    """gelu(gate) * up from [..., 2d]. Default is diffusers' GEGLU (value first, gate second, erf);
    gate_first=True is vLLM's order; approximate="tanh" the tanh GELU."""
    if approximate not in ("none", "tanh"):
        raise ValueError(f"approximate must be 'none' or 'tanh', got {approximate!r}")
    out = _gated_out(input, out)
    _function("geglu", input)(out, input, approximate == "tanh", gate_first)
    return out


def gelu_and_mul(out, input) -> None:
    """vLLM: out = gelu(input[..., :d]) * input[..., d:] (exact erf GELU)."""
    _function("gelu_and_mul", input)(out, input)


def gelu_tanh_and_mul(out, input) -> None:
    """vLLM: out = gelu_tanh(input[..., :d]) * input[..., d:]."""
    _function("gelu_tanh_and_mul", input)(out, input)


def gelu(input, approximate: str = "none", out=None):
    """F.gelu(input, approximate=...) for "none" (erf) and "tanh"."""
    if out is None:
        out = _empty_like(input)
    if approximate == "tanh":
        _function("gelu_tanh", input)(out, input)
    elif approximate == "none":
        _function("gelu", input)(out, input)
    else:
        raise ValueError(f"approximate must be 'none' or 'tanh', got {approximate!r}")
    return out


def gelu_tanh(input, out=None):
    """F.gelu(input, approximate="tanh") (LTX-Video's feed-forward activation)."""
    return gelu(input, "tanh", out)


def adaln(input, scale, shift, weight=None, eps: float = 1e-6, norm: str = "rms", out=None):
    """norm(input) * (1 + scale) + shift; norm "rms" (diffusers RMSNorm) or "layer" (LayerNorm,
    no affine), times weight when given. scale/shift [B, H], [B, 1, H] or [B, S, H]."""
    if norm not in ("rms", "layer"):
        raise ValueError(f"norm must be 'rms' or 'layer', got {norm!r}")
    if out is None:
        out = _empty_like(input)
    _function("adaln", input)(out, input, weight, scale, shift, eps, norm == "layer")
    return out


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
    "ltx_rotary_emb",
    "rms_norm",
    "rotary_embedding",
]

try:  # the layers (nn.Modules for kernels' kernelize) need torch
    import torch  # noqa: F401
except ImportError:
    pass
else:
    from . import layers  # noqa: E402

    __all__.append("layers")
