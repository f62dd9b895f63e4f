"""RoPE as vLLM's rotary_embedding (NeoX and GPT-J), in place on q and k."""

from __future__ import annotations

import pytest
import torch
from .reference_support import DEVICE, DTYPES, check, cos_sin_cache, ids, layout, randn


def ref_rotary(positions, x64, cache, is_neox):
    """x64 [T, H, D] rotated by the cache rows at positions (vLLM semantics), in float64."""
    rot = cache.shape[1]
    half = rot // 2
    c = cache.double()[positions.long()]
    cos, sin = c[:, None, :half], c[:, None, half:]
    y = x64.clone()
    idx1 = torch.arange(half, device=DEVICE) if is_neox else torch.arange(0, rot, 2, device=DEVICE)
    idx2 = idx1 + half if is_neox else idx1 + 1
    a, b = x64[..., idx1], x64[..., idx2]
    y[..., idx1] = a * cos - b * sin
    y[..., idx2] = b * cos + a * sin
    return y


ROTARY_CASES = [
    # tokens, q heads, kv heads (0: no key), head_size, rot_dim, fused [T, H*D] layout
    (1, 1, 1, 2, 2, True),
    (7, 4, 2, 128, 128, True),
    (5, 3, 0, 64, 32, False),  # partial rotary, no key
    (33, 8, 1, 80, 80, False),
    (65536, 1, 1, 8, 8, True),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
@pytest.mark.parametrize("case", ROTARY_CASES, ids=ids)
@pytest.mark.parametrize("is_neox", [True, False], ids=["neox", "gptj"])
def test_rotary_embedding_float64(k, dtype, case, is_neox):
    tokens, hq, hk, head, rot, fused = case
    cache = cos_sin_cache(1024, rot, torch.float32 if dtype != torch.float64 else dtype)
    positions = torch.randint(0, 1024, (tokens,), device=DEVICE)
    q = randn(tokens, hq, head, dtype=dtype)
    key = randn(tokens, hk, head, dtype=dtype) if hk else None
    q_ref = ref_rotary(positions, q.double(), cache, is_neox)
    k_ref = ref_rotary(positions, key.double(), cache, is_neox) if hk else None
    qa = q.flatten(1) if fused else q.clone()
    ka = None if key is None else (key.flatten(1) if fused else key.clone())
    qa, ka = qa.clone(), None if ka is None else ka.clone()
    rq, rk = k.rotary_embedding(positions, qa, ka, head, cache, is_neox)
    assert rq is qa and rk is ka  # in place
    check(qa.view(tokens, hq, head), q_ref, dtype, "query")
    if hk:
        check(ka.view(tokens, hk, head), k_ref, dtype, "key")
    # Channels past rot_dim are untouched.
    assert torch.equal(qa.view(tokens, hq, head)[..., rot:], q[..., rot:])


def test_rotary_embedding_variants(k):
    dtype = torch.bfloat16
    # A cache in the query dtype, int32 positions of shape [B, S], q/k as slices of a fused qkv
    # projection (row-strided: in place without a copy) and a permuted key (copied and written back).
    b, s, hq, hk, d = 2, 9, 4, 2, 64
    cache = cos_sin_cache(64, d, dtype)
    positions = torch.randint(0, 64, (b, s), device=DEVICE, dtype=torch.int32)
    qkv = randn(b, s, (hq + 2 * hk) * d, dtype=dtype)
    q_before = qkv[..., : hq * d].clone()
    key = layout(randn(b, s, hk, d, dtype=dtype), "permuted")
    key_before = key.clone()
    k.rotary_embedding(positions, qkv[..., : hq * d], key, d, cache, True)
    flat = positions.flatten()
    check(qkv[..., : hq * d].reshape(-1, hq, d), ref_rotary(flat, q_before.reshape(-1, hq, d).double(), cache, True),
          dtype, "query")
    check(key.reshape(-1, hk, d), ref_rotary(flat, key_before.reshape(-1, hk, d).double(), cache, True), dtype, "key")
    if DEVICE == "cpu":  # the CUDA kernel only device-asserts (a host check would need a sync)
        with pytest.raises(RuntimeError, match="outside the cache"):
            k.rotary_embedding(torch.tensor([64], device=DEVICE), randn(1, d, dtype=dtype), None, d, cache, True)
    with pytest.raises(RuntimeError, match="rot_dim"):
        k.rotary_embedding(flat, randn(flat.numel(), 32, dtype=dtype), None, 32, cache, True)
