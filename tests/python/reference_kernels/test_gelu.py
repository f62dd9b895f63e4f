"""GELU (erf and tanh): float64 references, F.gelu in the dtype, layouts, errors."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from .reference_support import (DTYPES, check, check_matches_module, ids, layout, poison, randn,
                                ref_gelu)


# On CUDA: (4, 1029), (2, 5, 4096) and (65536, 8) take 16-bit chunks of four elements on a small grid,
# the last block partial; (528, 2048) the largest grid that does on a 132-SM GPU (H100, H200), (529,
# 2048) the smallest that does not; (7,), (3, 127) and (4097,) the element-by-element tail.
GELU_SHAPES = [(), (1,), (7,), (3, 127), (4097,), (4, 1029), (2, 5, 4096), (528, 2048), (529, 2048), (65536, 8)]


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
@pytest.mark.parametrize("shape", GELU_SHAPES, ids=ids)
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_float64(k, dtype, shape, approximate):
    x = randn(*shape, dtype=dtype, scale=3.0)
    out = poison(shape, dtype)
    k.gelu(x, approximate, out=out)
    check(out, ref_gelu(x.double(), approximate), dtype, f"gelu {shape}")
    if dtype != torch.float64:
        check_matches_module(out, F.gelu(x, approximate=approximate), "F.gelu", floor=2**-6)


def test_gelu_tanh_layouts(k):
    x = randn(6, 4, 99, dtype=torch.bfloat16)
    for kind in ("row_strided", "last_dim_strided", "permuted"):
        out = layout(poison(x.shape, torch.bfloat16), kind)
        k.gelu_tanh(layout(x, kind), out=out)
        assert torch.equal(out, k.gelu_tanh(x)), kind


def test_gelu_errors(k):
    with pytest.raises(RuntimeError, match="last dimension must be even"):
        k.geglu(randn(3, 5))
    with pytest.raises(RuntimeError, match="out must have shape"):
        k.gelu_and_mul(poison((3, 5), torch.float32), randn(3, 8))
    with pytest.raises(ValueError, match="approximate"):
        k.gelu(randn(3), "fast")
