"""RoPE as transformers' apply_rotary_pos_emb (rotate_half): float64 references, bit for bit
against eager in the dtype, many tokens and heads, in place, empty inputs, errors."""

from __future__ import annotations

import pytest
import torch
from .reference_support import (DTYPES, LOW, check, eager_apply_rotary_pos_emb, hf_cos_sin, ids, poison,
                                randn)


def rotary_magnitude(x, cos, sin, unsqueeze_dim):
    """|x * cos| + |rotate_half(x) * sin|: the size of the two terms eager rounds separately."""
    a = x.double().abs()
    half = a.shape[-1] // 2
    swapped = torch.cat((a[..., half:], a[..., :half]), dim=-1)
    return a * cos.double().abs().unsqueeze(unsqueeze_dim) + swapped * sin.double().abs().unsqueeze(unsqueeze_dim)


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
@pytest.mark.parametrize("shape", [(1, 1, 1, 1, 2), (2, 4, 2, 7, 128), (1, 3, 3, 5, 64), (3, 2, 1, 33, 6)], ids=ids)
@pytest.mark.parametrize("unsqueeze_dim", [1, 2])
def test_apply_rotary_pos_emb(k, dtype, shape, unsqueeze_dim):
    b, hq, hk, s, d = shape
    # Like Qwen3: q/k are [B, S, H, D] projections, transposed to [B, H, S, D] views for unsqueeze_dim 1.
    q = randn(b, s, hq, d, dtype=dtype)
    key = randn(b, s, hk, d, dtype=dtype)
    if unsqueeze_dim == 1:
        q, key = q.transpose(1, 2), key.transpose(1, 2)
    cos, sin = hf_cos_sin(b, s, d, dtype)
    q_out, k_out = k.apply_rotary_pos_emb(q, key, cos, sin, unsqueeze_dim)
    q_ref, k_ref = eager_apply_rotary_pos_emb(q.double(), key.double(), cos.double(), sin.double(), unsqueeze_dim)
    check(q_out, q_ref, dtype, "q", rotary_magnitude(q, cos, sin, unsqueeze_dim))
    check(k_out, k_ref, dtype, "k", rotary_magnitude(key, cos, sin, unsqueeze_dim))
    # Eager in the same dtype rounds exactly where the kernel does: bit-exact.
    q_eager, k_eager = eager_apply_rotary_pos_emb(q, key, cos, sin, unsqueeze_dim)
    assert torch.equal(q_out, q_eager) and torch.equal(k_out, k_eager)


@pytest.mark.parametrize("dtype", LOW, ids=ids)
@pytest.mark.parametrize(
    "shape",
    # (batch, q heads, k heads, tokens, head size), from 64 tokens: the GPU then takes a block per token,
    # two heads a thread below its SM count (100 tokens) and four from it (GQA, odd head counts, head
    # size 80), where that block has at least 24 working threads: 5 + 1 heads of size 64 in 16-bit types
    # (12) and 1 + 1 of size 128 (8 or 16) take the flat grid.
    [(1, 24, 6, 100, 128), (1, 16, 4, 300, 128), (2, 24, 6, 150, 128), (3, 5, 1, 67, 64), (1, 32, 32, 140, 80),
     (2, 1, 1, 200, 128)],
    ids=ids,
)
@pytest.mark.parametrize("tables", ["per-sample", "broadcast"])
@pytest.mark.parametrize("out", ["poisoned", "in-place", "contiguous"])
def test_apply_rotary_pos_emb_many_tokens(k, dtype, shape, tables, out):
    """Into poisoned outputs laid out as the inputs, in place, or into contiguous [B, H, S, D] outputs
    (strides unlike the inputs': the GPU's other kernel); bit-exact against eager in the dtype."""
    b, hq, hk, s, d = shape
    q = randn(b, s, hq, d, dtype=dtype).transpose(1, 2)
    key = randn(b, s, hk, d, dtype=dtype).transpose(1, 2)
    cos, sin = hf_cos_sin(b if tables == "per-sample" else 1, s, d, dtype)
    q_eager, k_eager = eager_apply_rotary_pos_emb(q, key, cos, sin)
    if out == "in-place":
        q_out, k_out = q.clone(), key.clone()
        k.ops.apply_rotary_pos_emb(q_out, k_out, q_out, k_out, cos, sin, 1)
    else:
        def fresh(t):  # NaN everywhere, laid out as t or as a contiguous [B, H, S, D] (poison)
            return torch.full_like(t, float("nan")) if out == "poisoned" else poison(t.shape, t.dtype)

        q_out, k_out = fresh(q), fresh(key)
        k.ops.apply_rotary_pos_emb(q_out, k_out, q, key, cos, sin, 1)
    assert torch.equal(q_out, q_eager) and torch.equal(k_out, k_eager)
    q_ref, k_ref = eager_apply_rotary_pos_emb(q.double(), key.double(), cos.double(), sin.double())
    check(q_out, q_ref, dtype, "q", rotary_magnitude(q, cos, sin, 1))
    check(k_out, k_ref, dtype, "k", rotary_magnitude(key, cos, sin, 1))


def test_apply_rotary_pos_emb_many_heads(k):
    """264 heads at 140 tokens: too many heads for the GPU's block per token, so its other kernel runs."""
    q = randn(1, 140, 260, 128, dtype=torch.bfloat16).transpose(1, 2)
    key = randn(1, 140, 4, 128, dtype=torch.bfloat16).transpose(1, 2)
    cos, sin = hf_cos_sin(1, 140, 128, torch.bfloat16)
    q_out, k_out = torch.full_like(q, float("nan")), torch.full_like(key, float("nan"))
    k.ops.apply_rotary_pos_emb(q_out, k_out, q, key, cos, sin, 1)
    q_eager, k_eager = eager_apply_rotary_pos_emb(q, key, cos, sin)
    assert torch.equal(q_out, q_eager) and torch.equal(k_out, k_eager)


@pytest.mark.parametrize("shape", [(2, 4, 2, 0, 128), (2, 4, 2, 3, 0), (1, 0, 0, 3, 64)], ids=ids)
def test_apply_rotary_pos_emb_empty(k, shape):
    """No tokens, no head dimension or no heads: empty outputs of the inputs' shapes, and no launch
    (on the GPU a grid of zero blocks is an error)."""
    b, hq, hk, s, d = shape
    q, key = randn(b, s, hq, d).transpose(1, 2), randn(b, s, hk, d).transpose(1, 2)
    cos, sin = randn(b, s, d), randn(b, s, d)
    q_out, k_out = k.apply_rotary_pos_emb(q, key, cos, sin, 1)
    assert q_out.shape == q.shape and k_out.shape == key.shape


def test_apply_rotary_pos_emb_matches_transformers(k):
    modeling = pytest.importorskip("transformers.models.qwen3.modeling_qwen3")
    hf = modeling.apply_rotary_pos_emb  # a module when the hub decorator wraps it; callable either way
    for dtype in LOW:
        q = randn(2, 9, 8, 128, dtype=dtype).transpose(1, 2)
        key = randn(2, 9, 2, 128, dtype=dtype).transpose(1, 2)
        cos, sin = hf_cos_sin(1, 9, 128, dtype)  # batch 1 broadcasts
        ours = k.apply_rotary_pos_emb(q, key, cos, sin)
        theirs = hf(q, key, cos, sin)
        assert torch.equal(ours[0], theirs[0]) and torch.equal(ours[1], theirs[1]), dtype


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
@pytest.mark.parametrize("shape", [(1, 16, 4, 7, 128), (2, 3, 3, 5, 64), (1, 2, 1, 3, 6)], ids=ids)
def test_apply_rotary_pos_emb_in_place(k, dtype, shape):
    # The op may write over its inputs (q_out is q, k_out is k), as Liger's RoPE does: every
    # element pair is read before it is written, by the same thread.
    b, hq, hk, s, d = shape
    q = randn(b, s, hq, d, dtype=dtype).transpose(1, 2)
    key = randn(b, s, hk, d, dtype=dtype).transpose(1, 2)
    cos, sin = hf_cos_sin(b, s, d, dtype)
    q_expected, k_expected = k.apply_rotary_pos_emb(q, key, cos, sin)
    k.ops.apply_rotary_pos_emb(q, key, q, key, cos, sin, 1)
    assert torch.equal(q, q_expected) and torch.equal(key, k_expected)


def test_apply_rotary_pos_emb_errors(k):
    q = randn(1, 2, 3, 8)
    cos, sin = hf_cos_sin(1, 3, 8, torch.float32)
    with pytest.raises(RuntimeError, match="unsqueeze_dim"):
        k.apply_rotary_pos_emb(q, q, cos, sin, 3)
    with pytest.raises(RuntimeError, match="cos and sin must be"):
        k.apply_rotary_pos_emb(q, q, cos[..., :4], sin[..., :4])
