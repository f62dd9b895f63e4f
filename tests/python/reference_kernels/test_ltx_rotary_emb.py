"""LTX-Video RoPE (diffusers' apply_rotary_emb over the whole inner dim, fp32 tables)."""

from __future__ import annotations

import pytest
import torch
from .reference_support import DTYPES, check, ids, layout, ltx_tables, randn


def eager_ltx_rotary(x, cos, sin):
    x_real, x_imag = x.unflatten(2, (-1, 2)).unbind(-1)
    x_rotated = torch.stack([-x_imag, x_real], dim=-1).flatten(2)
    acc = torch.float64 if x.dtype == torch.float64 else torch.float32  # diffusers: x.float()
    return (x.to(acc) * cos + x_rotated.to(acc) * sin).to(x.dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
# (2, 2, 3, 4, 2048): on the GPU the flat kernel in half packs (a small grid); (1, 8, 16, 16, 768), 1.6 M
# elements: in whole packs.
@pytest.mark.parametrize("geometry", [(1, 1, 1, 1, 2), (2, 2, 3, 4, 2048), (1, 3, 4, 5, 96), (1, 4, 128, 128, 6),
                                      (1, 8, 16, 16, 768)], ids=ids)
@pytest.mark.parametrize("with_k", [True, False], ids=["qk", "q"])
def test_ltx_rotary_emb(k, dtype, geometry, with_k):
    b, f, h, w, c = geometry
    s = f * h * w
    cos, sin = ltx_tables(b, f, h, w, c) if c >= 6 else (randn(b, s, c), randn(b, s, c))
    q = randn(b, s, c, dtype=dtype)
    key = randn(b, s, c, dtype=dtype) if with_k else None
    q_out, k_out = k.ltx_rotary_emb(q, cos, sin, key)
    c64, s64 = cos.double(), sin.double()
    check(q_out, eager_ltx_rotary(q.double(), c64, s64), dtype, "q")
    if dtype != torch.float64:  # diffusers computes in fp32: bit-exact
        assert torch.equal(q_out, eager_ltx_rotary(q, cos, sin))
    if with_k:
        check(k_out, eager_ltx_rotary(key.double(), c64, s64), dtype, "k")
        if dtype != torch.float64:
            assert torch.equal(k_out, eager_ltx_rotary(key, cos, sin))
    else:
        assert k_out is None


def test_ltx_rotary_emb_layouts_and_broadcast(k):
    b, s, c = 2, 50, 192
    cos, sin = ltx_tables(1, 2, 5, 5, c)  # batch 1 broadcasts over b
    q = layout(randn(b, s, c, dtype=torch.bfloat16), "permuted")
    key = layout(randn(b, s, c, dtype=torch.bfloat16), "row_strided")
    q_out, k_out = k.ltx_rotary_emb(q, cos, sin, key)
    assert torch.equal(q_out, eager_ltx_rotary(q, cos, sin))
    assert torch.equal(k_out, eager_ltx_rotary(key, cos, sin))
    with pytest.raises(RuntimeError, match="must be float32"):
        k.ltx_rotary_emb(q, cos.bfloat16(), sin.bfloat16())


def test_ltx_matches_diffusers(k):
    ltx = pytest.importorskip("diffusers.models.transformers.transformer_ltx")
    dim = 2048  # LTX-Video 2B's inner dim (2048 % 6 = 2: two identity channels)
    rope = ltx.LTXVideoRotaryPosEmbed(dim=dim)
    hidden = randn(2, 3 * 4 * 5, dim, dtype=torch.bfloat16)
    cos, sin = rope(hidden, num_frames=3, height=4, width=5, rope_interpolation_scale=(8 / 25, 32, 32))
    ours = ltx_tables(2, 3, 4, 5, dim)
    assert torch.equal(cos, ours[0]) and torch.equal(sin, ours[1])
    q, key = randn(2, 60, dim, dtype=torch.bfloat16), randn(2, 60, dim, dtype=torch.bfloat16)
    q_out, k_out = k.ltx_rotary_emb(q, cos, sin, key)
    assert torch.equal(q_out, ltx.apply_rotary_emb(q, (cos, sin)))
    assert torch.equal(k_out, ltx.apply_rotary_emb(key, (cos, sin)))
    assert torch.equal(k.apply_rotary_emb(q, (cos, sin)), ltx.apply_rotary_emb(q, (cos, sin)))
