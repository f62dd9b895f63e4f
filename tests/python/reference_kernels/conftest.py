"""Correctness of the reference kernels (kernels/), loaded through the real `kernels` package.
One file per op (test_<op>.py); test_layers.py and test_compile_and_kernelize.py cover the layers,
torch.compile and kernelize over all of them; reference_support.py holds what they share.

Every op is checked against a float64 reference on fresh random inputs, with its output poisoned
(NaN) first: relative error ||out - ref|| / ||ref|| under 1e-5 (fp32), 1e-3 (fp16), 1e-2 (bf16),
never NaN. Then against the modules they replace (transformers' Qwen3RMSNorm and
apply_rotary_pos_emb, diffusers' RMSNorm, GELU, GEGLU, LTX-Video rotary and AdaLN code): bit-exact
where the rounding sequence is reproduced (the norms on the CPU, whose row statistics come from the
modules' own ATen ops), else within 1 ulp (3 on a GPU where a flipped intermediate rounding is
multiplied again; see check_matches_module). Then torch.compile(fullgraph=True) over
one function that uses every op, and kernels' kernelize on a tiny random Qwen3.

The same tests run on a GPU: KERNELHUB_TEST_DEVICE=cuda loads the CUDA variant (backend=None, as
kernels picks it) and puts every tensor on the GPU (bench/gpu_correctness.py does that).
KERNELHUB_TEST_SEED fixes the random inputs (every failure message names the seed in use).
"""

from __future__ import annotations

import zlib

import pytest
import torch
from .reference_support import BACKEND, KERNELS_DIR, SEED


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
