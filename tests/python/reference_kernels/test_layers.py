"""The `layers` module against the real normalisation and activation modules, the kernels
package's layer rules, and which inputs the layers leave to inductor under torch.compile."""

from __future__ import annotations

import pytest
import torch
from .reference_support import (DEVICE, LOW, NORM_EXACTNESS, check_matches_module, hf_cos_sin,
                                randn)


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
    from kernels._internals.layer.layer import _validate_layer  # kernels.layer.layer before 0.19
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
