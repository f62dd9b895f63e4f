"""RMSNorm, fused add and AdaLN on rows of one pack a thread (Qwen3's 128-wide q/k norms)."""

from __future__ import annotations

import pytest
import torch
from .reference_support import DTYPES, check, check_adaln, ids, modulation, poison, randn, ref_rms


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
@pytest.mark.parametrize("rows", [4233, 8199])
def test_norms_many_rows_of_one_pack(k, dtype, rows):
    """Rows of 9 and 16 packs (72 and 128 elements in bf16: Qwen3's q/k norms are 128 wide) past two
    blocks per SM of 16 rows: on the GPU the one-pack tile (kOnePackRowTile), each thread holding two
    rows for RMSNorm and four for fused add, and AdaLN's register-lean RMS kernel; 9 packs leave 7 of
    a row's 16 lanes empty, and the odd row counts the last block's last rows and passes (4233 and
    8199 rows are 132 x 32 + 9 and 256 x 32 + 7; the exact-row kernels' blocks of 16 rows leave 9 and
    7 too). Rows of exactly 16 packs take the exact-row kernels of RMSNorm and of AdaLN as RMS
    without a weight (32-bit offsets from each block's first row):
    also with rows one stride apart in and out (q of a fused qkv tensor) and, for AdaLN, three
    samples (the (batch, position) split). RMSNorm with and without a weight, fused add against the
    eager sum bit for bit, AdaLN as RMS (per-sample and per-token scale and shift) and as LayerNorm
    with a weight (three samples, per-token modulation, the generic kernel)."""
    pack = 16 // torch.tensor([], dtype=dtype).element_size()
    for h in (16 * pack, 9 * pack):
        x, w = randn(rows, h, dtype=dtype, scale=3.0), randn(h, dtype=dtype)
        for weight in (w, None):
            out = poison((rows, h), dtype)
            k.rms_norm(x, weight, 1e-6, out=out)
            check(out, ref_rms(x.double(), None if weight is None else weight.double(), 1e-6), dtype,
                  f"rms_norm {rows}x{h}")
        xi, r = x.clone(), randn(rows, h, dtype=dtype)
        summed = xi + r
        k.fused_add_rms_norm(xi, r, w, 1e-6)
        assert torch.equal(r, summed)
        check(xi, ref_rms(summed.double(), w.double(), 1e-6), dtype, f"fused_add_rms_norm {rows}x{h}")
        check_adaln(k, dtype, (1, rows, h), "per_sample_3d", "rms", False)
        check_adaln(k, dtype, (3, rows // 3, h), "per_token", "rms", False)
        check_adaln(k, dtype, (3, rows // 3, h), "per_token", "layer", True)
    # Rows one stride apart: x the middle third of [rows, 3h], the output the second half of [rows, 2h].
    h = 16 * pack
    qkv, wide_out, w = randn(rows, 3 * h, dtype=dtype, scale=3.0), poison((rows, 2 * h), dtype), randn(h, dtype=dtype)
    x, out = qkv[:, h : 2 * h], wide_out[:, h:]
    k.rms_norm(x, w, 1e-6, out=out)
    check(out, ref_rms(x.double(), w.double(), 1e-6), dtype, f"rms_norm {rows}x{h}, row stride {3 * h}")
    assert wide_out[:, :h].isnan().all()
    x3, out3 = qkv.reshape(3, rows // 3, 3 * h)[..., h : 2 * h], wide_out.reshape(3, rows // 3, 2 * h)[..., h:]
    scale, shift = modulation("per_token", 3, rows // 3, h, dtype)
    k.adaln(x3, scale, shift, None, 1e-6, "rms", out=out3)
    assert torch.equal(out3, k.adaln(x3.contiguous(), scale, shift, None, 1e-6, "rms"))
