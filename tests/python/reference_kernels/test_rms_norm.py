"""RMSNorm (Qwen3RMSNorm's math): float64 references, layouts, in place, errors."""

from __future__ import annotations

import pytest
import torch
from .reference_support import (DEVICE, DTYPES, LAYOUTS, check, ids, layout, poison, randn,
                                ref_rms)


# (3, 8192), (300, 2056), (450, 4104): the launch-bound register tiles (up to 4 rows per SM, one,
# two or, past 3 rows per SM on the H200, four packs a thread; 2056 and 4104 leave the last pack of
# the row to part of the threads).
RMS_SHAPES = [(1, 1), (1, 4097), (5, 7), (3, 127), (4, 128), (2, 3, 4096), (64, 3072), (3, 8192), (300, 2056),
              (450, 4104), (2, 4, 6, 128), (65536, 8)]


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
@pytest.mark.parametrize("shape", RMS_SHAPES, ids=ids)
@pytest.mark.parametrize("with_weight", [True, False], ids=["weight", "no_weight"])
def test_rms_norm_float64(k, dtype, shape, with_weight):
    x = randn(*shape, dtype=dtype, scale=3.0)
    w = randn(shape[-1], dtype=dtype) if with_weight else None
    out = poison(shape, dtype)
    assert k.rms_norm(x, w, 1e-6, out=out) is out
    check(out, ref_rms(x.double(), None if w is None else w.double(), 1e-6), dtype, f"rms_norm {shape}")


@pytest.mark.parametrize("dtype,shape", [(torch.bfloat16, (16411, 4096)), (torch.float16, (8199, 8200)),
                                         (torch.float32, (8201, 2052))], ids=ids)
def test_rms_norm_beyond_twice_l2(k, dtype, shape):
    """x and the output together past twice the H200's 60 MB L2 (135-269 MB): on CUDA the register
    tiles read x with an L2 evict-last policy (load_pack_l2_last); 8200 and 2052 wide leave the last
    pack of the row to part of the threads, and the odd row counts the last block part empty."""
    if DEVICE == "cpu":
        pytest.skip("sizes of a CUDA launch path")
    x, w = randn(*shape, dtype=dtype, scale=3.0), randn(shape[-1], dtype=dtype)
    out = poison(shape, dtype)
    k.rms_norm(x, w, 1e-6, out=out)
    check(out, ref_rms(x.double(), w.double(), 1e-6), dtype, f"rms_norm {shape}")


@pytest.mark.parametrize("in_layout", LAYOUTS)
@pytest.mark.parametrize("out_layout", LAYOUTS)
def test_rms_norm_layouts(k, in_layout, out_layout):
    base = randn(6, 5, 131, dtype=torch.bfloat16)
    x = layout(base, in_layout)
    w = randn(131, dtype=torch.bfloat16)
    out = layout(poison(base.shape, torch.bfloat16), out_layout)
    k.rms_norm(x, w, 1e-5, out=out)
    ref = k.rms_norm(base, w, 1e-5)
    assert torch.equal(out, ref)  # the layout never changes a bit
    check(out, ref_rms(base.double(), w.double(), 1e-5), torch.bfloat16)


def test_rms_norm_in_place(k):
    x = randn(7, 300, dtype=torch.float16)
    expected = k.rms_norm(x.clone(), None, 1e-6)
    k.rms_norm(x, None, 1e-6, out=x)
    assert torch.equal(x, expected)


def test_rms_norm_errors(k):
    x = randn(4, 8)
    with pytest.raises(RuntimeError, match="weight must have shape \\[8\\]"):
        k.rms_norm(x, randn(7), 1e-6)
    with pytest.raises(RuntimeError, match="weight has dtype"):
        k.rms_norm(x, randn(8, dtype=torch.float16), 1e-6)
    with pytest.raises(RuntimeError, match="out has shape"):
        k.rms_norm(x, None, 1e-6, out=poison((4, 9), torch.float32))
    with pytest.raises(RuntimeError, match="unsupported dtype"):
        k.rms_norm(torch.ones(2, 3, dtype=torch.int32, device=DEVICE))
    with pytest.raises(RuntimeError, match="residual has shape"):
        k.fused_add_rms_norm(x, randn(4, 9))
