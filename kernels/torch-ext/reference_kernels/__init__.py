"""kernelhub reference kernels: RMSNorm (and, as they land, RoPE, GEGLU, AdaLN)."""

from typing import Optional

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


__all__ = ["rms_norm"]
