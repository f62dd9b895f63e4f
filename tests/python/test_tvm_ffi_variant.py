"""The reference kernels' tvm-ffi variant against their torch variant, both loaded by the real
`kernels` 0.19.1 package (the tvm-ffi one through apache-tvm-ffi), and by the shim: the same Python
functions, the same results, the same errors. The kernel code is the same (kernels/kernel_src through
the ATen shim), so every result is bit for bit the torch variant's, except the CPU norms' row
statistics, which the torch build takes from ATen's fp32 reductions and the tvm-ffi build sums in
fp64: there the two may differ by a few units of the dtype's last place.

KERNELHUB_TEST_DEVICE=cuda compares the CUDA variants on the GPU, where every result must be equal.
"""

from __future__ import annotations

import glob
import os
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("tvm_ffi")

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("KERNELHUB_BUILD_DIR", ROOT / "build"))
DEVICE = os.environ.get("KERNELHUB_TEST_DEVICE", "cpu")
BACKEND = "cpu" if DEVICE == "cpu" else "cu"
# Ops whose CPU code takes its row statistics from ATen in the torch build (row_statistics.h).
NORMS = {"rms_norm", "fused_add_rms_norm", "adaln"}


def variant(framework: str) -> Path:
    found = [Path(p) for p in glob.glob(str(BUILD / "kernels" / "build" / f"{framework}*-{BACKEND}*"))]
    if len(found) != 1:
        pytest.skip(f"need one {framework} {DEVICE} variant under {BUILD / 'kernels' / 'build'}, found {found}")
    return found[0]


def only(tmp_path: Path, variant_dir: Path) -> Path:
    """A kernel directory whose build/ holds this one variant, so that selection has no other choice."""
    (tmp_path / "build").mkdir(parents=True)
    (tmp_path / "build" / variant_dir.name).symlink_to(variant_dir)
    return tmp_path


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    import kernels

    assert kernels.__version__ == "0.19.1", kernels.__version__
    # On the CPU, as kernels would pick a CPU variant on a machine without a GPU (backend=None: its CUDA).
    backend = "cpu" if DEVICE == "cpu" else None
    torch_kernel = kernels.get_local_kernel(only(tmp_path_factory.mktemp("torch"), variant("torch")), backend=backend)
    tvm_kernel = kernels.get_local_kernel(only(tmp_path_factory.mktemp("tvm"), variant("tvm-ffi")), backend=backend)
    assert "tvm_ffi" in type(tvm_kernel.ops).__module__ or "tvm_ffi" in repr(type(tvm_kernel.ops)).lower()
    return torch_kernel, tvm_kernel


def test_both_builds_offer_the_same_functions(pair):
    torch_kernel, tvm_kernel = pair
    assert sorted(tvm_kernel.__all__) == sorted(torch_kernel.__all__)
    for name in torch_kernel.__all__:
        assert callable(getattr(tvm_kernel, name)) or name == "layers"
    assert sorted(torch_kernel.layers.__all__ if hasattr(torch_kernel.layers, "__all__") else dir(torch_kernel.layers)) \
        == sorted(tvm_kernel.layers.__all__ if hasattr(tvm_kernel.layers, "__all__") else dir(tvm_kernel.layers))


def rand(*shape, dtype, scale=1.0):
    return (torch.randn(*shape, dtype=torch.float32) * scale).to(device=DEVICE, dtype=dtype)


def cases(dtype):
    """(op, call) pairs: call(kernel) runs the function on fresh copies of fixed inputs."""
    g = torch.Generator().manual_seed(7)
    torch.manual_seed(int(torch.randint(0, 1 << 30, (1,), generator=g)))
    x = rand(6, 256, dtype=dtype)
    w = rand(256, dtype=dtype, scale=0.5) + 1
    res = rand(6, 256, dtype=dtype)
    positions = torch.randint(0, 64, (5,), device=DEVICE)
    query = rand(5, 4 * 64, dtype=dtype)
    key = rand(5, 2 * 64, dtype=dtype)
    cache = rand(64, 64, dtype=dtype)
    q = rand(2, 4, 9, 32, dtype=dtype)
    k = rand(2, 2, 9, 32, dtype=dtype)
    cos, sin = rand(2, 9, 32, dtype=dtype), rand(2, 9, 32, dtype=dtype)
    lq, lk = rand(2, 9, 64, dtype=dtype), rand(2, 9, 64, dtype=dtype)
    lcos, lsin = rand(1, 9, 64, dtype=torch.float32), rand(1, 9, 64, dtype=torch.float32)
    gated = rand(3, 5, 2 * 96, dtype=dtype)
    h = rand(2, 7, 128, dtype=dtype)
    scale, shift = rand(2, 128, dtype=dtype, scale=0.1), rand(2, 128, dtype=dtype, scale=0.1)
    c = lambda t: t.clone()  # noqa: E731
    return [
        ("rms_norm", lambda m: m.rms_norm(c(x), c(w), 1e-6)),
        ("rms_norm", lambda m: m.rms_norm(c(x), None, 1e-5)),
        ("fused_add_rms_norm", lambda m: torch.cat(m.fused_add_rms_norm(c(x), c(res), c(w), 1e-6))),
        ("rotary_embedding", lambda m: torch.cat([t.flatten() for t in m.rotary_embedding(
            positions, c(query), c(key), 64, c(cache), True)])),
        ("rotary_embedding", lambda m: torch.cat([t.flatten() for t in m.rotary_embedding(
            positions, c(query), None, 64, c(cache), False) if t is not None])),
        ("apply_rotary_pos_emb", lambda m: torch.cat([t.flatten() for t in m.apply_rotary_pos_emb(q, k, cos, sin)])),
        ("ltx_rotary_emb", lambda m: torch.cat([t.flatten() for t in m.ltx_rotary_emb(lq, lcos, lsin, lk)])),
        ("geglu", lambda m: m.geglu(gated)),
        ("geglu", lambda m: m.geglu(gated, "tanh", gate_first=True)),
        ("gelu", lambda m: m.gelu(gated)),
        ("gelu_tanh", lambda m: m.gelu_tanh(gated)),
        ("adaln", lambda m: m.adaln(h, scale, shift, c(w[:128]), 1e-6, "rms")),
        ("adaln", lambda m: m.adaln(h, scale, shift, None, 1e-6, "layer")),
    ]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16], ids=["fp32", "bf16", "fp16"])
def test_the_same_results_as_the_torch_build(pair, dtype):
    torch_kernel, tvm_kernel = pair
    for op, call in cases(dtype):
        expected, got = call(torch_kernel), call(tvm_kernel)
        assert got.dtype == expected.dtype and got.shape == expected.shape and got.device == expected.device
        if DEVICE == "cpu" and op in NORMS:
            # A last-bit difference in the row statistics, carried through the op's later roundings:
            # a few units of the dtype's last place at the scale of the output.
            scale = expected.float().abs().max().item()
            diff = (got.float() - expected.float()).abs().max().item()
            assert diff <= 4 * torch.finfo(dtype).eps * scale, f"{op} ({dtype}): {diff} at scale {scale}"
        else:
            assert torch.equal(got, expected), f"{op} ({dtype}): {(got.float() - expected.float()).abs().max()}"


def test_the_same_errors_as_the_torch_build(pair):
    torch_kernel, tvm_kernel = pair
    x = torch.randn(4, 8, device=DEVICE)
    bad = torch.empty(4, 8, dtype=torch.int64, device=DEVICE)
    messages = []
    for kernel in pair:
        with pytest.raises(RuntimeError) as raised:
            kernel.rms_norm(x, None, 1e-6, out=bad)
        messages.append(str(raised.value))
    assert "rms_norm: out has dtype Long, input has Float" in messages[0]
    assert "rms_norm: out has dtype Long, input has Float" in messages[1]
    with pytest.raises(ValueError, match="approximate must be 'none' or 'tanh'"):
        tvm_kernel.geglu(x, "fast")


def test_the_shim_loads_the_tvm_ffi_variant_too(pair, tmp_path):
    """kernelhub's Python package (the drop-in for kernels) imports the same variant directory."""
    from shim_support import PACKAGE_DIR, require_shim

    require_shim()
    script = f"""
import sys, torch
sys.path.insert(0, {str(PACKAGE_DIR)!r})
import kernelhub
k = kernelhub.get_local_kernel({str(variant("tvm-ffi"))!r})
x = torch.randn(3, 64, device={DEVICE!r}); w = torch.randn(64, device={DEVICE!r})
torch.save((x, w, k.rms_norm(x, w, 1e-6)), {str(tmp_path / "out.pt")!r})
print(type(k.ops).__module__)
"""
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    x, w, got = torch.load(tmp_path / "out.pt")
    _, tvm_kernel = pair
    assert torch.equal(got, tvm_kernel.rms_norm(x, w, 1e-6))
