"""GEGLU (gelu(gate) * up, both orders) and vLLM's gelu_and_mul / gelu_tanh_and_mul entry points."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from .reference_support import (DEVICE, DTYPES, check, check_matches_module, ids, layout, poison, randn,
                                ref_gelu)


GEGLU_SHAPES = [(1, 2), (3, 14), (5, 254), (2, 8194), (2, 3, 256), (65536, 16)]


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
@pytest.mark.parametrize("shape", GEGLU_SHAPES, ids=ids)
@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("gate_first", [True, False], ids=["vllm_order", "diffusers_order"])
def test_geglu_float64(k, dtype, shape, approximate, gate_first):
    x = randn(*shape, dtype=dtype, scale=2.0)
    out = poison(shape[:-1] + (shape[-1] // 2,), dtype)
    k.geglu(x, approximate, gate_first, out=out)
    first, second = x.double().chunk(2, dim=-1)
    gate, up = (first, second) if gate_first else (second, first)
    # The activation is rounded to the dtype before the multiply, as eager does; where it falls
    # below the dtype's normal range (fp16, gate near -3) it keeps fewer bits than the dtype
    # promises, so the error is measured against the activation held at the smallest normal.
    activation = ref_gelu(gate, approximate)
    held = activation.abs().clamp_min(torch.finfo(dtype).smallest_normal if dtype != torch.float64 else 0.0)
    check(out, activation * up, dtype, f"geglu {shape}", magnitude=held * up.abs())


@pytest.mark.parametrize("shape,approximate", [((8193, 8192), "tanh"), ((16411, 4112), "none")], ids=ids)
def test_geglu_beyond_l2(k, shape, approximate):
    """Input and output past the H200's 60 MB L2 (201-202 MB, bf16): on CUDA gate and up are read with
    an L2 evict-last policy (the L2_LAST kernels)."""
    if DEVICE == "cpu":
        pytest.skip("sizes of a CUDA launch path")
    x = randn(*shape, dtype=torch.bfloat16, scale=2.0)
    out = poison((shape[0], shape[1] // 2), torch.bfloat16)
    k.geglu(x, approximate, True, out=out)
    gate, up = x.double().chunk(2, dim=-1)
    check(out, ref_gelu(gate, approximate) * up, torch.bfloat16, f"geglu {shape}")


@pytest.mark.parametrize("kind", ["row_strided", "last_dim_strided", "permuted"])
def test_geglu_layouts(k, kind):
    x = randn(4, 3, 64, dtype=torch.float16)
    out = layout(poison((4, 3, 32), torch.float16), kind)
    k.geglu(layout(x, kind), "tanh", True, out=out)
    assert torch.equal(out, k.geglu(x, "tanh", True))


def test_vllm_entry_points(k):
    x = randn(9, 2 * 200, dtype=torch.bfloat16)
    for fn, approximate in ((k.gelu_and_mul, "none"), (k.gelu_tanh_and_mul, "tanh")):
        out = poison((9, 200), torch.bfloat16)
        assert fn(out, x) is None
        assert torch.equal(out, k.geglu(x, approximate, gate_first=True))
        # vLLM / eager: the activation is rounded to the dtype, then multiplied.
        eager = F.gelu(x[:, :200], approximate=approximate) * x[:, 200:]
        check_matches_module(out, eager, fn.__name__, floor=2**-6)
