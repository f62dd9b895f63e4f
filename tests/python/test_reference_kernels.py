"""Correctness of the reference kernels (kernels/), loaded through the real `kernels` package.

Every op is checked against a float64 reference on fresh random inputs, with its output poisoned
(NaN) first: relative error ||out - ref|| / ||ref|| under 1e-5 (fp32), 1e-3 (fp16), 1e-2 (bf16),
never NaN. Then against the modules they replace (transformers' Qwen3RMSNorm and
apply_rotary_pos_emb, diffusers' RMSNorm, GELU, GEGLU, LTX-Video rotary and AdaLN code): bit-exact
where the rounding sequence is reproduced (the norms on the CPU, whose row statistics come from the
modules' own ATen ops), else within 1 ulp (3 on a GPU where a flipped intermediate rounding is
multiplied again; see check_matches_module). Then torch.compile(fullgraph=True) over
one function that uses every op, and kernels' kernelize on a tiny random Qwen3.

The same file runs on a GPU: KERNELHUB_TEST_DEVICE=cuda loads the CUDA variant (backend=None, as
kernels picks it) and puts every tensor on the GPU (bench/gpu_correctness.py does that).
KERNELHUB_TEST_SEED fixes the random inputs (every failure message names the seed in use).
"""

from __future__ import annotations

import math
import os
import random
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("KERNELHUB_BUILD_DIR", ROOT / "build"))
KERNELS_DIR = BUILD / "kernels"
DEVICE = os.environ.get("KERNELHUB_TEST_DEVICE", "cpu")
BACKEND = "cpu" if DEVICE == "cpu" else None
SEED = int(os.environ.get("KERNELHUB_TEST_SEED", random.randrange(1 << 31)))

DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.float64]
LOW = [torch.float32, torch.float16, torch.bfloat16]
TOL = {torch.float32: 1e-5, torch.float16: 1e-3, torch.bfloat16: 1e-2, torch.float64: 1e-12}
ids = lambda v: str(v).replace("torch.", "")  # noqa: E731


@pytest.fixture(scope="module")
def k():
    import kernels

    if not any((KERNELS_DIR / "build").glob("torch*")):
        pytest.skip(f"no built variant under {KERNELS_DIR}/build (build the reference_kernels target)")
    return kernels.get_local_kernel(KERNELS_DIR, backend=BACKEND)


@pytest.fixture(autouse=True)
def seeded(request):
    # A fresh seed per test, derived from the run's seed, so a failure can be replayed.
    torch.manual_seed(SEED ^ zlib.crc32(request.node.nodeid.encode()))
    yield


# ---------------------------------------------------------------------------------------------
# Helpers


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


# ---------------------------------------------------------------------------------------------
# RMSNorm

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


# ---------------------------------------------------------------------------------------------
# RoPE: vLLM rotary_embedding (NeoX and GPT-J)


def cos_sin_cache(max_pos, rot_dim, dtype, theta=10000.0):
    inv_freq = 1.0 / theta ** (torch.arange(0, rot_dim, 2, dtype=torch.float64, device=DEVICE) / rot_dim)
    freqs = torch.outer(torch.arange(max_pos, dtype=torch.float64, device=DEVICE), inv_freq)
    return torch.cat([freqs.cos(), freqs.sin()], dim=-1).to(dtype)


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


# ---------------------------------------------------------------------------------------------
# RoPE: transformers' apply_rotary_pos_emb (rotate_half)


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


# ---------------------------------------------------------------------------------------------
# RoPE: LTX-Video (diffusers' apply_rotary_emb over the whole inner dim, fp32 tables)


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


# ---------------------------------------------------------------------------------------------
# GEGLU and GELU


def ref_gelu(x64, approximate):
    # Without eager's cancellation in 1 + erf / 1 + tanh for x << 0, which would make the float64
    # reference itself wrong in its leading digits there.
    if approximate == "tanh":
        return x64 * torch.sigmoid(2 * math.sqrt(2 / math.pi) * (x64 + 0.044715 * x64.pow(3)))
    return 0.5 * x64 * torch.special.erfc(-x64 / math.sqrt(2))


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


# ---------------------------------------------------------------------------------------------
# AdaLN


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


# ---------------------------------------------------------------------------------------------
# Against the real normalisation modules


def test_rms_norm_matches_qwen3_and_diffusers(k):
    modeling = pytest.importorskip("transformers.models.qwen3.modeling_qwen3")
    normalization = pytest.importorskip("diffusers.models.normalization")
    for dtype in LOW:
        for hidden in (128, 4096):  # per-head q/k norm and the hidden norm
            x = randn(3, 17, hidden, dtype=dtype, scale=2.0)
            qwen = modeling.Qwen3RMSNorm(hidden, eps=1e-6).to(device=DEVICE, dtype=dtype)
            with torch.no_grad():
                qwen.weight.copy_(randn(hidden, dtype=dtype))
                ours = k.layers.RMSNorm.forward(qwen, x)
                check_matches_module(ours, qwen(x), f"Qwen3RMSNorm {dtype} {hidden}", **NORM_EXACTNESS)
                for affine in (False, True):
                    dn = normalization.RMSNorm(hidden, eps=1e-6, elementwise_affine=affine).to(DEVICE, dtype)
                    if affine:
                        dn.weight.copy_(randn(hidden, dtype=dtype))
                    ours = k.layers.DiffusersRMSNorm.forward(dn, x)
                    check_matches_module(ours, dn(x), f"diffusers RMSNorm {dtype} {hidden} affine={affine}",
                                         **NORM_EXACTNESS)


def test_activation_layers_match_diffusers(k):
    activations = pytest.importorskip("diffusers.models.activations")
    for dtype in LOW:
        x = randn(4, 10, 64, dtype=dtype)
        with torch.no_grad():
            geglu = activations.GEGLU(64, 96).to(DEVICE, dtype)
            check_matches_module(k.layers.GEGLU.forward(geglu, x), geglu(x), f"GEGLU {dtype}", 
                                 floor=2**-6)
            for approximate in ("tanh", "none"):
                gelu = activations.GELU(64, 256, approximate=approximate).to(DEVICE, dtype)
                check_matches_module(k.layers.GELU.forward(gelu, x), gelu(x), f"GELU {approximate} {dtype}",
                                     floor=2**-6)


def test_layers_follow_the_kernels_layer_rules(k):
    from kernels.layer.layer import _validate_layer
    from torch import nn

    for name in k.layers.__all__:
        layer = getattr(k.layers, name)
        assert issubclass(layer, nn.Module) and layer.__init__ is nn.Module.__init__, name
        assert layer.has_backward is False and layer.can_torch_compile is True, name
    modeling = pytest.importorskip("transformers.models.qwen3.modeling_qwen3")
    _validate_layer(check_cls=modeling.Qwen3RMSNorm, cls=k.layers.RMSNorm, repo="reference-kernels")


def our_ops_called(fn, *args):
    """Runs fn eagerly and returns the names of the reference-kernel ops it dispatched."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Recorder(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.names = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.names.append(str(func))
            return func(*args, **(kwargs or {}))

    with Recorder() as recorder:
        out = fn(*args)
    return out, [n for n in recorder.names if "_reference_kernels" in n]


def our_ops_traced(fn, *args):
    """torch.compile(fn) through a backend that keeps dynamo's graphs: the output and the reference-kernel
    ops in the traced graph (the ops inductor would have to call as opaque kernels)."""
    graphs = []

    def keep(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    torch._dynamo.reset()
    out = torch.compile(fn, backend=keep, fullgraph=True)(*args)
    return out, [str(n.target) for g in graphs for n in g.graph.nodes if "_reference_kernels" in str(n.target)]


def test_layers_leave_launch_bound_inputs_to_inductor(k):
    """Under torch.compile the norm and rotary layers give inputs of at most COMPILE_NATIVE_MAX_BYTES to
    inductor as the module's own torch code (it fuses them with their neighbours); larger inputs, and every
    input outside torch.compile, take our kernels."""
    modeling = pytest.importorskip("transformers.models.qwen3.modeling_qwen3")
    limit = k.layers.COMPILE_NATIVE_MAX_BYTES
    hidden = 512
    over = limit // (hidden * 4) + 1  # fp32 rows just over the limit
    norm = modeling.Qwen3RMSNorm(hidden, eps=1e-6).to(DEVICE)
    with torch.no_grad():
        norm.weight.copy_(randn(hidden))
    forward = lambda x: k.layers.RMSNorm.forward(norm, x)  # noqa: E731
    with torch.no_grad():
        for tokens, inductor in ((1, True), (over - 1, True), (over, False)):
            x = randn(1, tokens, hidden, scale=2.0)
            assert (x.numel() * 4 <= limit) == inductor
            out, traced = our_ops_traced(forward, x)
            assert bool(traced) != inductor, (tokens, traced)
            if inductor:  # the module's own code: the same result bit for bit
                assert torch.equal(out, norm(x)), tokens
            else:
                check_matches_module(out, norm(x), f"compiled RMSNorm layer, {tokens} tokens", **NORM_EXACTNESS)
            _, called = our_ops_called(forward, x)
            assert called and "rms_norm" in called[0], (tokens, called)  # eager: always ours

        # The rotary layer decides on q's size, for q and k together.
        heads, dim = 4, 64
        for tokens, inductor in ((1, True), (limit // (heads * dim * 4) + 1, False)):
            q, key = randn(1, heads, tokens, dim), randn(1, 2, tokens, dim)
            cos, sin = hf_cos_sin(1, tokens, dim, torch.float32)
            expected = modeling.apply_rotary_pos_emb(q, key, cos, sin)
            (q_out, k_out), traced = our_ops_traced(
                lambda *a: k.layers.RotaryPosEmb.forward(None, *a), q, key, cos, sin)
            assert bool(traced) != inductor, (tokens, traced)
            for got, want in zip((q_out, k_out), expected):
                if inductor:
                    assert torch.equal(got, want)
                else:
                    check_matches_module(got, want, f"compiled rotary layer, {tokens} tokens")
            _, called = our_ops_called(lambda *a: k.layers.RotaryPosEmb.forward(None, *a), q, key, cos, sin)
            assert any("apply_rotary_pos_emb" in c for c in called), called


# ---------------------------------------------------------------------------------------------
# torch.compile: one graph over every op (inductor), no graph break, same result as eager.


def every_op(ops_module, x, w, r, qkv_positions, q, key, cache, cos, sin, ltx_q, ltx_cos, ltx_sin, g, scale, shift):
    a = ops_module.rms_norm(x, w, 1e-6)
    xi, ri = ops_module.fused_add_rms_norm(x.clone(), r.clone(), w, 1e-6)
    q1, k1 = ops_module.rotary_embedding(qkv_positions, q.clone(), key.clone(), q.shape[-1], cache, True)
    q2, k2 = ops_module.rotary_embedding(qkv_positions, q.clone(), key.clone(), q.shape[-1], cache, False)
    q3, k3 = ops_module.apply_rotary_pos_emb(q.unsqueeze(0), key.unsqueeze(0), cos, sin, 2)
    l1, l2 = ops_module.ltx_rotary_emb(ltx_q, ltx_cos, ltx_sin, ltx_q * 2)
    g1 = ops_module.geglu(g, "none", False)
    g2 = ops_module.geglu(g, "tanh", True)
    g3 = ops_module.gelu_tanh(g)
    g4 = ops_module.gelu(g)
    out = torch.empty_like(g1)
    ops_module.gelu_and_mul(out, g)
    m1 = ops_module.adaln(x, scale, shift, None, 1e-6, "rms")
    m2 = ops_module.adaln(x, scale, shift, w, 1e-6, "layer")
    return a, xi, ri, q1, k1, q2, k2, q3, k3, l1, l2, g1, g2, g3, g4, out, m1, m2


def test_torch_compile_fullgraph(k):
    torch._dynamo.reset()
    dtype = torch.bfloat16
    t, hq, hk, d = 6, 4, 2, 64
    x, r, w = randn(2, t, 256, dtype=dtype), randn(2, t, 256, dtype=dtype), randn(256, dtype=dtype)
    positions = torch.randint(0, 32, (t,), device=DEVICE)
    q, key = randn(t, hq, d, dtype=dtype), randn(t, hk, d, dtype=dtype)
    cache = cos_sin_cache(32, d, torch.float32)
    cos, sin = hf_cos_sin(1, t, d, dtype)
    ltx_cos, ltx_sin = ltx_tables(1, 1, 2, 3, 96)
    ltx_q = randn(1, 6, 96, dtype=dtype)
    g = randn(3, 5, 2 * 96, dtype=dtype)
    scale, shift = randn(2, 256, dtype=dtype), randn(2, 256, dtype=dtype)
    args = (x, w, r, positions, q, key, cache, cos, sin, ltx_q, ltx_cos, ltx_sin, g, scale, shift)
    eager = every_op(k, *args)
    compiled = torch.compile(lambda *a: every_op(k, *a), fullgraph=True)(*args)  # raises on a graph break
    for i, (e, c) in enumerate(zip(eager, compiled)):
        assert torch.equal(e, c), f"output {i} differs under torch.compile"


# ---------------------------------------------------------------------------------------------
# transformers' kernelize on a tiny random Qwen3: our RMSNorm and rotary layers swap in, logits match.

KERNELIZE_SCRIPT = r"""
import sys, torch, kernels
from pathlib import Path
from kernels import LocalLayerRepository, Mode, kernelize, use_kernel_mapping
from transformers import Qwen3Config, Qwen3ForCausalLM

path, backend, device = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
backend = None if backend == "auto" else backend

class Repo(LocalLayerRepository):
    # LocalLayerRepository.load() lets kernels pick the backend; with a CUDA torch on a machine
    # without a GPU that is the CUDA variant, so name the backend explicitly.
    def load(self):
        return getattr(kernels.get_local_kernel(self._repo_path, backend=backend).layers, self.layer_name)

from transformers.models.qwen3 import modeling_qwen3 as mq
if not hasattr(mq.Qwen3RMSNorm, "kernel_layer_name"):
    # transformers enables its hub decorators only with the kernels versions it supports
    # (5.23: >= 0.18.2); with an older kernels, apply the same decorators through it.
    kernels.replace_kernel_forward_from_hub(mq.Qwen3RMSNorm, "RMSNorm")
    mq.apply_rotary_pos_emb = kernels.use_kernel_forward_from_hub("rotary_pos_emb")(mq.apply_rotary_pos_emb)
    kernels.use_kernelized_func(mq.apply_rotary_pos_emb)(mq.Qwen3Attention)

torch.manual_seed(0)
config = Qwen3Config(vocab_size=256, hidden_size=128, intermediate_size=256, num_hidden_layers=2,
                     num_attention_heads=4, num_key_value_heads=2, head_dim=32, max_position_embeddings=128)
for dtype, tol in ((torch.float32, 1e-4), (torch.bfloat16, 3e-2)):
    model = Qwen3ForCausalLM(config).eval().to(device=device, dtype=dtype)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(1 + 0.1 * torch.randn_like(p))  # not all ones
    ids = torch.randint(0, 256, (2, 24), device=device)
    with torch.no_grad():
        ref = model(ids).logits.double()
    mapping = {"RMSNorm": {device: Repo(path, layer_name="RMSNorm")},
               "rotary_pos_emb": {device: Repo(path, layer_name="RotaryPosEmb")}}
    with use_kernel_mapping(mapping, inherit_mapping=False):
        kernelize(model, mode=Mode.INFERENCE, device=device, use_fallback=False)
    norms = [m for m in model.modules() if type(m).__name__ == "Qwen3RMSNorm"]
    swapped = [m for m in norms if "_reference_kernels_" in m.forward.__func__.__module__]
    assert len(norms) == 2 * 4 + 1 and len(swapped) == len(norms), (len(norms), len(swapped))
    assert "_reference_kernels_" in mq.apply_rotary_pos_emb.forward.__func__.__module__
    with torch.no_grad():
        got = model(ids).logits.double()
    rel = ((got - ref).norm() / ref.norm()).item()
    assert rel < tol, (dtype, rel)
    print(f"{dtype}: {len(swapped)} RMSNorm layers and rotary_pos_emb swapped, logits relative difference {rel:.2e}")
"""


def test_kernelize_tiny_qwen3(k):
    pytest.importorskip("transformers")
    # A child process: kernelize patches forward methods of module-level objects (the rotary
    # function module), which must not leak into other tests.
    result = subprocess.run(
        [sys.executable, "-c", KERNELIZE_SCRIPT, str(KERNELS_DIR), BACKEND or "auto", DEVICE],
        capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-4000:]
    print(result.stdout)
