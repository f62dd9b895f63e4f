"""AdaLN (diffusers' RMSNorm or LayerNorm, then x * (1 + scale) + shift): float64 references
over every launch path, layouts, diffusers' LTX block, errors."""

from __future__ import annotations

import pytest
import torch
from .reference_support import (CUDA_SIZES, DTYPES, LOW, NORM_EXACTNESS, as_bsh, check, check_adaln,
                                check_matches_module, ids, layout, modulation, poison, randn, ref_adaln)


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
@pytest.mark.parametrize("shape", [(1, 1, 1), (2, 3, 7), (1, 5, 127), (2, 4, 2048), (1, 2, 4097), (4, 16384, 8)],
                         ids=ids)
@pytest.mark.parametrize("mod", ["per_sample", "per_sample_3d", "per_token"])
@pytest.mark.parametrize("norm", ["rms", "layer"])
def test_adaln_float64(k, dtype, shape, mod, norm):
    check_adaln(k, dtype, shape, mod, norm, weighted=bool(shape[2] % 2))  # with and without weight across shapes


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
@pytest.mark.parametrize("shape,mod,norm,weighted",
                         [pytest.param((3, 1411, 2048), "per_sample_3d", "rms", False, marks=CUDA_SIZES),
                          pytest.param((3, 1411, 2048), "per_token", "rms", False, marks=CUDA_SIZES),
                          ((1, 1101, 4096), "per_sample", "rms", False),
                          pytest.param((1, 2053, 4096), "per_sample", "rms", False, marks=CUDA_SIZES),
                          pytest.param((2, 1029, 4096), "per_token", "layer", True, marks=CUDA_SIZES),
                          pytest.param((3, 1411, 2048), "per_sample", "rms", True, marks=CUDA_SIZES),
                          pytest.param((3, 1411, 2048), "per_token", "layer", False, marks=CUDA_SIZES),
                          ((3, 411, 2048), "per_sample_3d", "rms", False),
                          ((3, 411, 2048), "per_token", "rms", False),
                          ((3, 411, 2048), "per_sample", "rms", True),
                          ((3, 411, 2048), "per_token", "layer", False)], ids=ids)
def test_adaln_float64_many_blocks(k, dtype, shape, mod, norm, weighted):
    """Rows enough for more than two blocks per SM, x and the output within 1.5 times the L2: two packs
    a thread (4233 rows of 2048 take 2117 blocks of 128 x 2 in bf16 on the H200's 132 SMs and 4233 of
    256 x 2 in fp32; 2053 rows of 4096, 2053 blocks of 256 x 2), but four below 2048 rows of 3072-4096
    (1101 rows of 4096, 551 blocks of 128 x 4). The CUDA kernel loads scale and shift after the reduction,
    and RMS without a weight takes its register-lean specialisation; the odd row counts leave the last
    block part empty. Against the same kernel with a weight and with LayerNorm. 1233 rows of 2048 take
    a row per block of 256 threads, one pack each (up to 32 rows per SM at rows of up to 256 packs),
    in its short kernel and, with a weight, in the general one."""
    check_adaln(k, dtype, shape, mod, norm, weighted)


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
@pytest.mark.parametrize("shape,mod,norm,weighted", [((1, 3, 5120), "per_sample_3d", "rms", False),
                                                     ((3, 5, 8192), "per_sample", "rms", False),
                                                     ((2, 7, 3072), "per_token", "rms", False),
                                                     ((2, 50, 3072), "per_token", "rms", False),
                                                     ((1, 100, 3072), "per_sample", "layer", True),
                                                     ((3, 5, 8192), "per_token", "layer", True),
                                                     ((1, 3, 5120), "per_sample", "rms", True),
                                                     ((2, 3, 12288), "per_sample", "rms", False),
                                                     ((2, 5, 4096), "per_sample", "rms", False),
                                                     ((2, 5, 4096), "per_token", "layer", True)], ids=ids)
def test_adaln_float64_launch_bound(k, dtype, shape, mod, norm, weighted):
    """Few rows of 2048-12288 elements: on the GPU a row per block of 256-512 threads, scale and shift
    loaded with x, and RMS without a weight in its short kernel (12288 in fp16/bf16: 512 threads of
    three or four packs; 4096: 256 threads of two, and 3072 at 33-132 rows); one sample (its rows need
    no division into batch and position) and several. Against the same tiles with a weight and with
    LayerNorm."""
    check_adaln(k, dtype, shape, mod, norm, weighted)


@pytest.mark.parametrize("dtype", LOW, ids=ids)
@pytest.mark.parametrize("h", [2048, 4096])
def test_adaln_launch_bound_layouts(k, dtype, h):
    """900 rows of 2048 or 4096 in three samples, per-sample modulation: on the GPU a row per block of
    256 threads, with one or two packs a thread (bf16). Where x's and the output's rows are each one
    stride apart (contiguous, or a slice of wider rows) RMS without a weight takes its short kernel,
    which divides the row into batch and position by multiply-shift; where batch and position do not
    fold into rows (permuted), the general kernel with the same tile. The same values bit for bit,
    and the float64 reference."""
    b, s = 3, 300
    x = randn(b, s, h, dtype=dtype, scale=2.0)
    scale, shift = modulation("per_sample", b, s, h, dtype)
    expected = k.adaln(x, scale, shift, None, 1e-6, "rms", out=poison(x.shape, dtype))
    ref, magnitude, noise = ref_adaln(x.double(), as_bsh(scale).double(), as_bsh(shift).double(), None, 1e-6, False)
    check(expected, ref, dtype, "adaln launch-bound", magnitude, roundings=5, noise=noise)

    def sliced(t):  # rows h + 8 apart: still 16-byte aligned
        wide = poison(t.shape[:-1] + (h + 8,), dtype)
        wide[..., :h] = t
        return wide[..., :h]

    for kind, place in (("sliced", sliced), ("permuted", lambda t: layout(t, "permuted"))):
        out = place(poison(x.shape, dtype))
        k.adaln(place(x), scale, shift, None, 1e-6, "rms", out=out)
        assert torch.equal(out, expected), kind


@pytest.mark.parametrize("dtype,shape,norm,weighted", [(torch.bfloat16, (1, 4099, 5120), "rms", False),
                                                       (torch.float32, (3, 2733, 3072), "layer", True),
                                                       pytest.param(torch.bfloat16, (1, 16411, 4096), "rms", False,
                                                                    marks=CUDA_SIZES),
                                                       pytest.param(torch.float16, (2, 4099, 8192), "layer", True,
                                                                    marks=CUDA_SIZES),
                                                       pytest.param(torch.bfloat16, (2, 10007, 2048), "rms", False,
                                                                    marks=CUDA_SIZES)], ids=ids)
def test_adaln_float64_beyond_l2(k, dtype, shape, norm, weighted):
    """x and the output overflow the GPU's L2 cache, as in the benchmark's bandwidth-bound sizes: the
    CUDA kernel streams its stores and takes the tiles whose packs all hold data (128 x 5 at 5120 wide
    in bf16, 128 x 6 at 3072 in fp32); an odd row count (4099, 8199) leaves the last block half empty.
    Past twice the L2 (all but the first: 134-269 MB) it reads x with an L2 evict-last policy, in
    the register-lean RMS kernel (4096 wide in 128 x 4, 2048 wide in 64 x 4: four packs a thread
    past 1.5 times the L2) and the general one (8192 wide, LayerNorm, weight)."""
    check_adaln(k, dtype, shape, "per_sample_3d", norm, weighted)


@pytest.mark.parametrize("dtype,shape,mod,norm,weighted",
                         [pytest.param(torch.bfloat16, (2, 5003, 2560), "per_sample", "rms", False, marks=CUDA_SIZES),
                          pytest.param(torch.float16, (2, 5003, 2560), "per_sample_3d", "rms", False,
                                       marks=CUDA_SIZES),
                          pytest.param(torch.bfloat16, (4, 4099, 3072), "per_sample_3d", "rms", False,
                                       marks=CUDA_SIZES),
                          pytest.param(torch.bfloat16, (2, 4099, 3072), "per_token", "rms", False, marks=CUDA_SIZES),
                          pytest.param(torch.bfloat16, (3, 3331, 2560), "per_sample", "layer", True,
                                       marks=CUDA_SIZES),
                          (torch.bfloat16, (3, 7, 2560), "per_sample", "rms", False),
                          (torch.float16, (2, 5, 3072), "per_token", "rms", False)], ids=ids)
def test_adaln_float64_several_samples_beyond_l2(k, dtype, shape, mod, norm, weighted):
    """Video shapes: several samples (or a row per token) of 2560-3072 wide rows whose x and output
    exceed 1.5 times the GPU's L2 (100-201 MB). RMS without a weight takes three packs a thread in
    128-thread rows (2560: lanes past 64 hold two), scale and shift loaded after the reduction: here at
    odd sample lengths, so that a block's rows straddle two samples, per sample and per token; LayerNorm
    with a weight keeps the general kernel's 64 x 5. The last two shapes are small (one pass on the
    CPU, launch-bound tiles on the GPU)."""
    check_adaln(k, dtype, shape, mod, norm, weighted)


def test_adaln_2d_input_and_layouts(k):
    x = randn(3, 300, dtype=torch.bfloat16)
    scale, shift = randn(3, 300, dtype=torch.bfloat16), randn(3, 300, dtype=torch.bfloat16)
    out = k.adaln(x, scale, shift)
    ref, magnitude, _ = ref_adaln(x.double(), scale.double(), shift.double(), None, 1e-6, False)
    check(out, ref, torch.bfloat16, "adaln 2-d", magnitude)
    x3 = randn(2, 6, 130, dtype=torch.float16)
    sc, sh = randn(2, 6, 130, dtype=torch.float16), randn(2, 6, 130, dtype=torch.float16)
    expected = k.adaln(x3, sc, sh, None, 1e-6, "layer")
    for kind in ("row_strided", "last_dim_strided", "permuted"):
        out = layout(poison(x3.shape, torch.float16), kind)
        k.adaln(layout(x3, kind), layout(sc, kind), layout(sh, kind), None, 1e-6, "layer", out=out)
        assert torch.equal(out, expected), kind


def test_adaln_matches_diffusers_ltx_block(k):
    normalization = pytest.importorskip("diffusers.models.normalization")
    dim, b, s = 256, 2, 24
    for dtype in LOW:
        norm1 = normalization.RMSNorm(dim, eps=1e-6, elementwise_affine=False)
        table = randn(6, dim, dtype=dtype) / dim**0.5
        temb = randn(b, s, 6 * dim, dtype=dtype)
        hidden = randn(b, s, dim, dtype=dtype)
        ada = table[None, None] + temb.reshape(b, s, 6, -1)
        shift_msa, scale_msa, *_ = ada.unbind(dim=2)
        eager = norm1(hidden) * (1 + scale_msa) + shift_msa
        ours = k.adaln(hidden, scale_msa, shift_msa, None, 1e-6, "rms")
        exact = check_matches_module(ours, eager, f"LTX AdaLN {dtype}", floor=1.0, **NORM_EXACTNESS)
        # Output head: LayerNorm (no affine) then x * (1 + scale) + shift, per-sample scale.
        ln = torch.nn.LayerNorm(dim, eps=1e-6, elementwise_affine=False)
        scale, shift = randn(b, 1, dim, dtype=dtype, scale=0.5), randn(b, 1, dim, dtype=dtype)
        eager = ln(hidden) * (1 + scale) + shift
        check_matches_module(k.adaln(hidden, scale, shift, None, 1e-6, "layer"), eager, f"LTX head {dtype}",
                             floor=1.0, **NORM_EXACTNESS)
        assert exact > 0.99


def test_adaln_errors(k):
    x = randn(2, 3, 8)
    with pytest.raises(RuntimeError, match="does not broadcast"):
        k.adaln(x, randn(2, 2, 8), randn(2, 2, 8))
    with pytest.raises(RuntimeError, match="scale has dtype"):
        k.adaln(x, randn(2, 8, dtype=torch.float16), randn(2, 8))
    with pytest.raises(ValueError, match="norm"):
        k.adaln(x, randn(2, 8), randn(2, 8), norm="group")
