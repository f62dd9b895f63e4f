"""kernelize through kernelhub: a tiny random Qwen3 (CPU, config built in code) whose RMSNorm and
rotary layers map to kernelhub.LayerRepository on a `kernelhub serve` gets the Hub kernel, loaded
by kernelhub (not by the kernels package), and computes the same logits."""

from __future__ import annotations

import pytest
from shim_support import child_env, publish, require_shim, run_json

KERNELIZE = r"""
import json, sys, torch
import kernels, kernelhub
from kernelhub import LayerRepository, Mode, kernelize, use_kernel_mapping
from transformers import Qwen3Config, Qwen3ForCausalLM
from transformers.models.qwen3 import modeling_qwen3 as mq

if not hasattr(mq.Qwen3RMSNorm, "kernel_layer_name"):
    # transformers enables its hub decorators only with the kernels versions it supports;
    # with an older kernels, apply the same decorators (as tests/python/reference_kernels/test_compile_and_kernelize.py).
    kernelhub.replace_kernel_forward_from_hub(mq.Qwen3RMSNorm, "RMSNorm")
    mq.apply_rotary_pos_emb = kernelhub.use_kernel_forward_from_hub("rotary_pos_emb")(mq.apply_rotary_pos_emb)
    kernelhub.use_kernelized_func(mq.apply_rotary_pos_emb)(mq.Qwen3Attention)

torch.manual_seed(0)
config = Qwen3Config(vocab_size=256, hidden_size=128, intermediate_size=256, num_hidden_layers=2,
                     num_attention_heads=4, num_key_value_heads=2, head_dim=32, max_position_embeddings=128)
model = Qwen3ForCausalLM(config).eval()
with torch.no_grad():
    for name, p in model.named_parameters():
        if name.endswith("norm.weight"):
            p.copy_(1 + 0.1 * torch.randn_like(p))  # not all ones
ids = torch.randint(0, 256, (2, 24))
with torch.no_grad():
    ref = model(ids).logits.double()

repo = sys.argv[1]
mapping = {"RMSNorm": {"cpu": LayerRepository(repo, layer_name="RMSNorm", version=1)},
           "rotary_pos_emb": {"cpu": LayerRepository(repo, layer_name="RotaryPosEmb", version=1)}}
with use_kernel_mapping(mapping, inherit_mapping=False):
    kernelize(model, mode=Mode.INFERENCE, device="cpu", use_fallback=False)
with torch.no_grad():
    got = model(ids).logits.double()

norms = [m for m in model.modules() if type(m).__name__ == "Qwen3RMSNorm"]
kernelized = kernelhub.get_kernelized_layers(model)  # kernels' introspection, re-exported
rotary = list(kernelized.funcs.values())  # the attention modules' rotary functions: nothing else is one
print(json.dumps({
    "norms": len(norms),
    "swapped": sum("_reference_kernels_" in m.forward.__func__.__module__ for m in norms),
    "rotary": [f.module.forward.__func__.__module__ for f in rotary],
    "repos": sorted({type(x.repo).__module__ + "." + type(x.repo).__name__ + " " + x.repo.layer_name
                     for x in [*kernelized.layers.values(), *rotary]}),
    "kernelized": sorted(type(x.module).__name__ for x in kernelized.layers.values()),
    "ours": [[k.metadata.id, k.repo_info.repo_id if k.repo_info else None] for k in kernelhub.get_loaded_kernels()],
    "theirs": len(kernels.get_loaded_kernels()),
    "relative_difference": ((got - ref).norm() / ref.norm()).item(),
}))
"""


def test_kernelize_tiny_qwen3_with_kernelhub_repositories(hub_server, tmp_path):
    require_shim()
    pytest.importorskip("transformers")
    publish(hub_server, "acme/reference-kernels")
    # KERNELHUB_BACKEND: the repo has only the CPU variant; keep a GPU machine from wanting CUDA.
    env = child_env(hub_server, tmp_path / "cache", KERNELHUB_BACKEND="cpu")
    got = run_json(KERNELIZE, env, "acme/reference-kernels", timeout=600)
    assert got["norms"] == 2 * 4 + 1 and got["swapped"] == got["norms"], got
    # Each attention module's own rotary wrapper (kernels 0.18+) was swapped, and kernels'
    # get_kernelized_layers names kernelhub's repositories as the source of every kernel.
    assert len(got["rotary"]) == 2 and all(m.startswith("_reference_kernels_") for m in got["rotary"]), got
    assert got["kernelized"] == ["Qwen3RMSNorm"] * got["norms"], got
    assert got["repos"] == ["kernelhub.layers.LayerRepository RMSNorm",
                            "kernelhub.layers.LayerRepository RotaryPosEmb"], got
    assert [repo for _, repo in got["ours"]] == ["acme/reference-kernels"], got  # loaded by kernelhub ...
    assert got["theirs"] == 0, got  # ... and not by the kernels package
    assert got["relative_difference"] < 1e-4, got
