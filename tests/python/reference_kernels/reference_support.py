"""What the reference-kernel tests share: the run's device and seed, random inputs, poisoned outputs,
the float64 check and the comparison with the replaced modules, memory layouts, and the float64 or
eager references that more than one op's tests use."""

from __future__ import annotations

import math
import os
import random
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[3]
BUILD = Path(os.environ.get("KERNELHUB_BUILD_DIR", ROOT / "build"))
KERNELS_DIR = BUILD / "kernels"
DEVICE = os.environ.get("KERNELHUB_TEST_DEVICE", "cpu")
BACKEND = "cpu" if DEVICE == "cpu" else None
SEED = int(os.environ.get("KERNELHUB_TEST_SEED", random.randrange(1 << 31)))

DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.float64]
LOW = [torch.float32, torch.float16, torch.bfloat16]
TOL = {torch.float32: 1e-5, torch.float16: 1e-3, torch.bfloat16: 1e-2, torch.float64: 1e-12}
ids = lambda v: str(v).replace("torch.", "")  # noqa: E731


def randn(*shape, dtype=torch.float32, scale=1.0):
    return (torch.randn(shape, dtype=torch.float64, device=DEVICE) * scale).to(dtype)


def poison(shape, dtype):
    return torch.full(shape, float("nan"), dtype=dtype, device=DEVICE)


def check(out, ref, dtype, what="", magnitude=None, roundings=2, noise=None):
    """out (any dtype) against a float64 reference.

    magnitude: where the op rounds intermediate terms to the dtype before summing them, as the eager
    code it reproduces does (HF RoPE, AdaLN), cancellation makes the error relative to the terms, not
    to their sum: then the error is measured against ||sum of |terms|||.

    roundings: how many times the op rounds a value to the dtype on its way to one output element.
    Over many elements the errors average out far below TOL; a tensor of a few elements can meet
    the worst case of every rounding at once (roundings x half an ulp, relative), which for fp16
    AdaLN (5 roundings: 2.4e-3) is above TOL. Below 64 elements the bound is the larger of the two.

    noise: a per-element absolute error the reference itself cannot resolve (see ref_adaln); only
    the error beyond it counts."""
    assert out.shape == ref.shape, (what, out.shape, ref.shape)
    assert not torch.isnan(out).any(), f"{what}: NaN in output (seed {SEED})"
    out64 = out.double()
    # A result below the dtype's normal range cannot be represented to relative precision.
    denom = max((ref if magnitude is None else magnitude).norm().item(), torch.finfo(dtype).smallest_normal)
    diff = (out64 - ref).abs()
    if noise is not None:
        diff = (diff - noise).clamp_min(0)
    err = diff.norm().item() / denom
    tol = TOL[dtype]
    if out.numel() < 64 and dtype != torch.float64:
        tol = max(tol, roundings * torch.finfo(dtype).eps / 2)
    assert err < tol, f"{what}: relative error {err:.3g} >= {tol:.3g} for {dtype} (seed {SEED})"


# The CPU norms take their row statistics from the ATen ops the modules use
# (kernels/kernel_src/common/row_statistics.h), so there they are the modules' bit for bit. On a GPU
# the fp32 sums run in another order than eager's: one flipped rounding, multiplied once more by the
# weight or 1 + scale, is at most 3 ulps.
# Cases whose sizes only select a CUDA launch path: the CPU reaches no other path than smaller
# cases of the same test do, at seconds a case.
CUDA_SIZES = pytest.mark.skipif(DEVICE == "cpu", reason="sizes of a CUDA launch path")
NORM_EXACTNESS = {"min_exact": 1.0, "max_ulp": 0.0} if DEVICE == "cpu" else {"min_exact": 0.97, "max_ulp": 3.0}


def check_matches_module(out, ref, what, min_exact=0.99, floor=0.0, max_ulp=1.0):
    """Our output against the replaced module's output in the same dtype.

    fp16/bf16: every element within max_ulp ulps of the module's value, the ulp taken at
    max(|value|, floor), and at least min_exact of the elements with |value| >= floor bit-exact.
    floor > 0 where the module's own fp32 math cancels (eager GELU's 1 + erf(x) for x << 0, AdaLN's
    final + shift): there eager has lost the digits we would be compared on. Elements differ at all
    only where an fp32 intermediate differs in its last bits (another summation order; PyTorch's
    vectorised CPU erf/tanh) and that flips a rounding; max_ulp > 1 where such a flip is then
    multiplied (by a weight or 1 + scale, < 2 in size) and rounded again: at most 3 ulps.
    fp32/fp64: no bit pattern to match, so a relative error under 1e-5 (same floor)."""
    assert out.dtype == ref.dtype and out.shape == ref.shape
    o, e = out.double(), ref.double()
    assert not torch.isnan(o).any(), f"{what}: NaN"
    magnitude = torch.maximum(e.abs(), torch.full_like(e, floor))
    if out.dtype in (torch.float32, torch.float64):
        rel = ((o - e).norm() / magnitude.norm().clamp_min(1e-300)).item()
        assert rel < 1e-5, f"{what}: relative difference {rel:.3g} from the module (seed {SEED})"
        return 1.0
    mantissa, exponent = torch.frexp(magnitude)
    ulp = torch.ldexp(torch.full_like(e, torch.finfo(out.dtype).eps / 2), exponent)  # ulp at that magnitude
    tiny = torch.finfo(out.dtype).smallest_normal * torch.finfo(out.dtype).eps
    worst = ((o - e).abs() / torch.maximum(ulp, torch.full_like(e, tiny))).max().item()
    assert worst <= max_ulp, f"{what}: {worst:.3g} ulp from the module (seed {SEED})"
    counted = e.abs() >= floor
    exact = (out == ref)[counted].double().mean().item() if counted.sum() >= 256 else 1.0
    assert exact >= min_exact, f"{what}: only {exact:.4f} of the elements are bit-exact (seed {SEED})"
    return exact


def layout(t, kind):
    """The same values as t in another memory layout.

    row_strided: rows further apart than their length (a slice of a wider tensor; kernels use it
    in place); last_dim_strided: every other element (kernels copy); permuted: outer dims
    transposed (kernels copy unless their view allows it)."""
    if kind == "contiguous":
        return t.contiguous()
    if kind == "row_strided":
        wide = poison(t.shape[:-1] + (t.shape[-1] + 5,), t.dtype)
        wide[..., : t.shape[-1]] = t
        return wide[..., : t.shape[-1]]
    if kind == "last_dim_strided":
        wide = poison(t.shape[:-1] + (t.shape[-1] * 2,), t.dtype)
        wide[..., ::2] = t
        return wide[..., ::2]
    if kind == "permuted":
        assert t.dim() >= 3
        return t.transpose(0, 1).contiguous().transpose(0, 1)
    raise ValueError(kind)


LAYOUTS = ["contiguous", "row_strided", "last_dim_strided", "permuted"]


def ref_rms(x64, w64, eps):
    y = x64 * torch.rsqrt(x64.pow(2).mean(-1, keepdim=True) + eps)
    return y if w64 is None else y * w64


# RoPE tables: vLLM's cos/sin cache, transformers' per-token cos/sin, LTX-Video's fp32 tables.


def cos_sin_cache(max_pos, rot_dim, dtype, theta=10000.0):
    inv_freq = 1.0 / theta ** (torch.arange(0, rot_dim, 2, dtype=torch.float64, device=DEVICE) / rot_dim)
    freqs = torch.outer(torch.arange(max_pos, dtype=torch.float64, device=DEVICE), inv_freq)
    return torch.cat([freqs.cos(), freqs.sin()], dim=-1).to(dtype)


def hf_cos_sin(batch, seq, dim, dtype, theta=1e6):
    inv_freq = 1.0 / theta ** (torch.arange(0, dim, 2, dtype=torch.float32, device=DEVICE) / dim)
    pos = torch.randint(0, 4096, (batch, seq), device=DEVICE).float()
    freqs = pos[..., None] * inv_freq
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos().to(dtype), emb.sin().to(dtype)


def eager_apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
    def rotate_half(x):
        return torch.cat((-x[..., x.shape[-1] // 2 :], x[..., : x.shape[-1] // 2]), dim=-1)

    cos, sin = cos.unsqueeze(unsqueeze_dim), sin.unsqueeze(unsqueeze_dim)
    return (q * cos) + (rotate_half(q) * sin), (k * cos) + (rotate_half(k) * sin)


def ltx_tables(batch, frames, height, width, dim):
    """cos/sin exactly as diffusers' LTXVideoRotaryPosEmbed computes them (copied math, so this
    runs without diffusers; test_ltx_matches_diffusers checks the copy)."""
    grid = torch.stack(torch.meshgrid(*(torch.arange(n, dtype=torch.float32, device=DEVICE)
                                        for n in (frames, height, width)), indexing="ij"))
    grid = grid.unsqueeze(0).repeat(batch, 1, 1, 1, 1)
    scale = (8 / 25, 32, 32)
    grid[:, 0:1] = grid[:, 0:1] * scale[0] / 20
    grid[:, 1:2] = grid[:, 1:2] * scale[1] / 2048
    grid[:, 2:3] = grid[:, 2:3] * scale[2] / 2048
    grid = grid.flatten(2, 4).transpose(1, 2)
    freqs = 10000.0 ** torch.linspace(math.log(1.0, 10000.0), math.log(10000.0, 10000.0), dim // 6, device=DEVICE,
                                      dtype=torch.float32)
    freqs = freqs * math.pi / 2.0 * (grid.unsqueeze(-1) * 2 - 1)
    freqs = freqs.transpose(-1, -2).flatten(2)
    cos, sin = freqs.cos().repeat_interleave(2, dim=-1), freqs.sin().repeat_interleave(2, dim=-1)
    if dim % 6:
        cos = torch.cat([torch.ones_like(cos[:, :, : dim % 6]), cos], dim=-1)
        sin = torch.cat([torch.zeros_like(sin[:, :, : dim % 6]), sin], dim=-1)
    return cos, sin


# GELU (GEGLU's activation too)


def ref_gelu(x64, approximate):
    # Without eager's cancellation in 1 + erf / 1 + tanh for x << 0, which would make the float64
    # reference itself wrong in its leading digits there.
    if approximate == "tanh":
        return x64 * torch.sigmoid(2 * math.sqrt(2 / math.pi) * (x64 + 0.044715 * x64.pow(3)))
    return 0.5 * x64 * torch.special.erfc(-x64 / math.sqrt(2))


# AdaLN (the norms' one-pack test checks it too)


def ref_adaln(x64, scale64, shift64, w64, eps, layer_norm):
    """(float64 result, magnitude of its two rounded terms |norm * (1 + scale)| + |shift|, noise).

    noise: LayerNorm's x - mean is exact in fp32 only to |x| 2^-23, and 1/std amplifies that when a
    row is (nearly) constant: a one-element row is 0 in exact arithmetic but ~1e-5 in eager fp16
    (which we match bit for bit). Errors within that bound are not the kernel's."""
    noise = torch.zeros_like(x64)
    if layer_norm:
        xc = x64 - x64.mean(-1, keepdim=True)
        rstd = torch.rsqrt(xc.pow(2).mean(-1, keepdim=True) + eps)
        n = xc * rstd
        noise = x64.abs() * 2.0**-23 * rstd
    else:
        n = x64 * torch.rsqrt(x64.pow(2).mean(-1, keepdim=True) + eps)
    if w64 is not None:
        n, noise = n * w64, noise * w64.abs()
    return n * (1 + scale64) + shift64, (n * (1 + scale64)).abs() + shift64.abs(), noise * (1 + scale64).abs()


def modulation(kind, b, s, h, dtype):
    if kind == "per_sample":
        return randn(b, h, dtype=dtype, scale=0.5), randn(b, h, dtype=dtype)
    if kind == "per_sample_3d":
        return randn(b, 1, h, dtype=dtype, scale=0.5), randn(b, 1, h, dtype=dtype)
    # LTX: (scale_shift_table[None, None] + temb.reshape(B, T, 6, H)).unbind(2): strided views.
    ada = randn(b, s, 6, h, dtype=dtype, scale=0.5)
    shift_msa, scale_msa = ada.unbind(2)[:2]
    return scale_msa, shift_msa


def as_bsh(t):
    return t.unsqueeze(1) if t.dim() == 2 else t


def check_adaln(k, dtype, shape, mod, norm, weighted):
    """AdaLN on fresh inputs, into a poisoned output, against the float64 reference."""
    b, s, h = shape
    x = randn(b, s, h, dtype=dtype, scale=2.0)
    scale, shift = modulation(mod, b, s, h, dtype)
    w = randn(h, dtype=dtype) if weighted else None
    out = poison(x.shape, dtype)
    k.adaln(x, scale, shift, w, 1e-6, norm, out=out)
    ref, magnitude, noise = ref_adaln(x.double(), as_bsh(scale).double(), as_bsh(shift).double(),
                                      None if w is None else w.double(), 1e-6, norm == "layer")
    # Rounded to the dtype: the norm, its product with the weight, 1 + scale, the product, + shift.
    check(out, ref, dtype, f"adaln {shape} {mod} {norm}", magnitude, roundings=5, noise=noise)
