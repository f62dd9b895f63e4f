"""Fused residual add + RMSNorm: the residual bit for bit, the norm against float64 and
against the unfused op."""

from __future__ import annotations

import pytest
import torch
from .reference_support import (DEVICE, DTYPES, LOW, NORM_EXACTNESS, check, check_matches_module, ids,
                                layout, randn, ref_rms)


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
@pytest.mark.parametrize(
    "shape", [(1, 1), (3, 7), (2, 127), (4, 4097), (2, 3, 128), (3, 2048), (300, 2056), (450, 4104), (129, 8192), (65536, 8)], ids=ids
)
def test_fused_add_rms_norm_float64(k, dtype, shape):
    x = randn(*shape, dtype=dtype)
    r = randn(*shape, dtype=dtype)
    w = randn(shape[-1], dtype=dtype)
    summed = x + r  # eager add: the residual the kernel must produce, bit for bit
    xi, ri = x.clone(), r.clone()
    k.fused_add_rms_norm(xi, ri, w, 1e-6)
    assert torch.equal(ri, summed)
    check(xi, ref_rms(summed.double(), w.double(), 1e-6), dtype, f"fused_add_rms_norm {shape}")
    # Same as the unfused op on the rounded sum: bit for bit on the CPU. On a GPU the two ops may hold
    # a row in different tiles (RMSNorm takes two packs a thread at 133-1056 rows where fused add
    # takes one: row_registers.cuh), so their fp32 sums run in different orders.
    unfused = k.rms_norm(summed, w, 1e-6)
    if DEVICE == "cpu":
        assert torch.equal(xi, unfused)
    else:
        check_matches_module(xi, unfused, f"fused_add_rms_norm {shape} against rms_norm", **NORM_EXACTNESS)


@pytest.mark.parametrize("dtype", LOW, ids=ids)
@pytest.mark.parametrize("shape", [(8201, 2048), (16411, 1032), (8201, 1024), (8199, 4104)], ids=ids)
def test_fused_add_rms_norm_beyond_l2(k, dtype, shape):
    # x and r together past the H200's 60 MB L2 at rows of 129-256 packs (bf16/fp16 2048 and 1032
    # wide, fp32 1024): on CUDA a row per block of 256 threads, one pack each (fused_add_rms_norm_cuda.cu).
    # All four move more than twice the L2 (x and r read and written): x and r are read with an L2
    # evict-last policy; 4104 wide takes the register tiles with a part-empty last pack (bf16, fp16;
    # fp32's 1026 packs take the streaming kernel).
    # On the CPU these sizes reach no other path than the shapes above do, at 3 s a case.
    if DEVICE == "cpu":
        pytest.skip("sizes of a CUDA launch path")
    x, r, w = randn(*shape, dtype=dtype), randn(*shape, dtype=dtype), randn(shape[-1], dtype=dtype)
    summed = x + r
    k.fused_add_rms_norm(x, r, w, 1e-6)
    assert torch.equal(r, summed)
    check(x, ref_rms(summed.double(), w.double(), 1e-6), dtype, f"fused_add_rms_norm {shape}")


@pytest.mark.parametrize("kind", ["row_strided", "last_dim_strided", "permuted"])
def test_fused_add_rms_norm_layouts(k, kind):
    x, r = randn(4, 3, 200, dtype=torch.bfloat16), randn(4, 3, 200, dtype=torch.bfloat16)
    xi, ri = layout(x, kind), layout(r, kind)
    k.fused_add_rms_norm(xi, ri, None, 1e-6)
    assert torch.equal(ri, x + r)
    assert torch.equal(xi, k.rms_norm(x + r, None, 1e-6))
