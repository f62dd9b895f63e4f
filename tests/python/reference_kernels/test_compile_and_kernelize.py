"""Every op in one torch.compile(fullgraph=True) graph, and kernels' kernelize on a tiny Qwen3."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch
from .reference_support import (BACKEND, DEVICE, KERNELS_DIR, cos_sin_cache, hf_cos_sin, ltx_tables,
                                randn)


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
    # Since kernels 0.18 each attention module has its own rotary wrapper, which kernelize swaps.
    kernelized = kernels.get_kernelized_layers(model)
    assert {type(layer.module).__name__ for layer in kernelized.layers.values()} == {"Qwen3RMSNorm"}
    rotary = list(kernelized.funcs.values())  # the attention modules' rotary functions: nothing else is one
    assert len(rotary) == 2 and all("_reference_kernels_" in f.module.forward.__func__.__module__ for f in rotary)
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
