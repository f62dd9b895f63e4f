#!/usr/bin/env python3
"""End to end: Qwen3-8B in transformers and one LTX-Video block in diffusers, each in four
configurations on one GPU: eager, eager + our kernels, torch.compile, torch.compile + our kernels.

    python3 bench/e2e/bench_e2e.py --kernels BUILD/kernels --out DIR [--parts prefill,decode,ltx] [--tiny]

Models are built from configs in code with random weights (nothing is downloaded). Our kernels come
from the CUDA variant under BUILD/kernels/build/ (a kernel-builder layout):
- Qwen3 uses `kernels.kernelize` with `LocalLayerRepository` mappings for transformers' own hub
  hooks: "RMSNorm" -> our RMSNorm layer (all 36x4+1 norms, q/k norms included) and "rotary_pos_emb"
  -> our RotaryPosEmb. `Mode.INFERENCE`, plus `Mode.TORCH_COMPILE` for compile + ours.
- diffusers has no hub hooks on the LTX block, so the block's forward is swapped the way kernelize
  swaps a forward (a stateless function reading the module's own attributes): norm + modulation
  become our AdaLN, q/k norms our RMSNorm, the rotary our LTX RoPE (q and k in one call), the
  feed-forward activation our GELU-tanh. Attention and matmuls are PyTorch's.

Timing: CUDA events around each call, after warm-up (compiles included in warm-up), median of the
repeats. Prefill is one forward over 1 x S tokens (logits of the last token only, no cache). Decode
is the 64 steps after a 512-token prompt with transformers' static cache: generate(65) - generate(1)
tokens, so prefill cancels; "compile" there is transformers' own compiled decode (CompileConfig,
CUDA graphs) and eager is `disable_compile=True`. Each configuration's output is compared with
eager's (relative L2 difference) to show that the swapped model computes the same thing.
Appends to DIR/e2e.csv row by row, so a run cut short keeps what it measured.

Under torch.compile our layers leave launch-bound inputs (at most layers.COMPILE_NATIVE_MAX_BYTES) to
inductor; "compile+ours-always" sets that limit to -1 so that our kernels run at every size (the
configuration measured before that rule existed). --configs picks configurations (eager always runs
first: it is the reference and the speedups' denominator).
"""

from __future__ import annotations

import argparse
import csv
import importlib
import importlib.util
import statistics
import sys
import time
import types
from pathlib import Path

import torch


def log(*args):
    print(f"[{time.strftime('%H:%M:%S')}]", *args, flush=True)


DEVICE = "cuda"  # --device cpu runs the same code on a CPU (with --tiny), to check the script
KERNELIZE_WITH = "kernels"  # or "kernelhub", our drop-in (KERNELHUB_BACKEND=cpu picks a CPU variant)


def sync():
    if DEVICE == "cuda":
        torch.cuda.synchronize()


def time_ms(fn, warmup: int, repeats: int) -> float:
    """Median of `repeats` calls: CUDA events on the GPU, the wall clock on the CPU."""
    for _ in range(warmup):
        fn()
    sync()
    times = []
    for _ in range(repeats):
        if DEVICE == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        else:
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def rel_diff(got: torch.Tensor, ref: torch.Tensor) -> float:
    got, ref = got.double(), ref.double()
    return ((got - ref).norm() / ref.norm()).item()


class Results:
    FIELDS = ["model", "part", "shape", "config", "ms", "speedup_vs_eager", "rel_diff_vs_eager", "note"]

    def __init__(self, path: Path):
        self.path = path
        self.eager_ms: dict[tuple, float] = {}
        if not path.exists():
            with path.open("w", newline="") as f:
                csv.writer(f).writerow(self.FIELDS)

    def add(self, model, part, shape, config, ms, diff=float("nan"), note=""):
        key = (model, part, shape)
        if config == "eager":
            self.eager_ms[key] = ms
        speedup = self.eager_ms.get(key, float("nan")) / ms
        with self.path.open("a", newline="") as f:
            csv.writer(f).writerow([model, part, shape, config, f"{ms:.4f}", f"{speedup:.3f}", f"{diff:.2e}", note])
        log(f"{model} {part} {shape} {config}: {ms:.3f} ms ({speedup:.2f}x eager, diff {diff:.1e}) {note}")


def load_ours(kernels_dir: Path):
    """Imports our CUDA variant's package (reference_kernels) the way get_local_kernel would."""
    pattern = "torch*-cu1*" if DEVICE == "cuda" else "torch*-cpu-*"
    variants = sorted(p for p in (kernels_dir / "build").glob(pattern) if (p / "__init__.py").exists())
    if not variants:
        sys.exit(f"no {DEVICE} variant under {kernels_dir}/build")
    spec = importlib.util.spec_from_file_location("reference_kernels", variants[0] / "__init__.py",
                                                  submodule_search_locations=[str(variants[0])])
    module = importlib.util.module_from_spec(spec)
    sys.modules["reference_kernels"] = module
    spec.loader.exec_module(module)
    log("ours:", variants[0].name)
    return module


# ---------------------------------------------------------------------------------------------
# Qwen3-8B


def qwen3_8b_config(tiny: bool):
    from transformers import Qwen3Config

    if tiny:  # the same code path on a CPU-sized model, for checking the script
        return Qwen3Config(vocab_size=512, hidden_size=256, intermediate_size=512, num_hidden_layers=2,
                           num_attention_heads=4, num_key_value_heads=2, head_dim=64, max_position_embeddings=4096)
    return Qwen3Config(vocab_size=151936, hidden_size=4096, intermediate_size=12288, num_hidden_layers=36,
                       num_attention_heads=32, num_key_value_heads=8, head_dim=128, max_position_embeddings=40960,
                       rope_theta=1_000_000.0, rms_norm_eps=1e-6, tie_word_embeddings=False)


def build_qwen3(tiny: bool):
    from transformers import Qwen3ForCausalLM

    torch.manual_seed(0)
    config = qwen3_8b_config(tiny)
    config._attn_implementation = "sdpa"
    torch.set_default_dtype(torch.bfloat16)  # built in bf16 directly (8B in fp32 would be 32 GB first)
    try:
        with torch.device(DEVICE):
            model = Qwen3ForCausalLM(config).eval()
    finally:
        torch.set_default_dtype(torch.float32)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(1 + 0.1 * torch.randn_like(p))  # not all ones: the weight multiply must matter
    params = sum(p.numel() for p in model.parameters())
    log(f"Qwen3 {'tiny' if tiny else '8B'}: {params / 1e9:.2f} B parameters")
    return model


def set_compile_native_limit(model, config: str):
    """COMPILE_NATIVE_MAX_BYTES for `config` in the layers module that kernelize loaded (not ours: another
    copy): -1 (our kernels at every size) for the "-always" configurations, else the value it shipped with."""
    modules = {type(m).forward.__module__ for m in model.modules()} | {
        getattr(m.forward, "__module__", "") for m in model.modules()}
    layers = [sys.modules[n] for n in modules if n in sys.modules and hasattr(sys.modules[n], "COMPILE_NATIVE_MAX_BYTES")]
    if not layers:
        raise RuntimeError("no kernelized layer module with COMPILE_NATIVE_MAX_BYTES found in the model")
    for module in layers:
        shipped = module.__dict__.setdefault("_shipped_compile_native_max_bytes", module.COMPILE_NATIVE_MAX_BYTES)
        module.COMPILE_NATIVE_MAX_BYTES = -1 if config.endswith("-always") else shipped
        log(f"COMPILE_NATIVE_MAX_BYTES = {module.COMPILE_NATIVE_MAX_BYTES} in {module.__name__}")


def kernelize_qwen3(model, kernels_dir: Path, compile_mode: bool):
    from transformers.models.qwen3 import modeling_qwen3 as mq

    kernels = importlib.import_module(KERNELIZE_WITH)
    LocalLayerRepository, Mode = kernels.LocalLayerRepository, kernels.Mode
    kernelize, use_kernel_mapping = kernels.kernelize, kernels.use_kernel_mapping

    if not hasattr(mq.Qwen3RMSNorm, "kernel_layer_name"):
        # transformers turns its hub hooks on only for the kernels versions it knows; apply the same
        # decorators it would (as tests/python/test_shim_kernelize.py does).
        log("transformers has no hub hooks on Qwen3RMSNorm here: applying kernels' decorators")
        kernels.replace_kernel_forward_from_hub(mq.Qwen3RMSNorm, "RMSNorm")
        mq.apply_rotary_pos_emb = kernels.use_kernel_forward_from_hub("rotary_pos_emb")(mq.apply_rotary_pos_emb)
        kernels.use_kernelized_func(mq.apply_rotary_pos_emb)(mq.Qwen3Attention)
    mapping = {
        "RMSNorm": {DEVICE: LocalLayerRepository(kernels_dir, layer_name="RMSNorm")},
        "rotary_pos_emb": {DEVICE: LocalLayerRepository(kernels_dir, layer_name="RotaryPosEmb")},
    }
    mode = Mode.INFERENCE | Mode.TORCH_COMPILE if compile_mode else Mode.INFERENCE
    with use_kernel_mapping(mapping, inherit_mapping=False):
        kernelize(model, mode=mode, device=DEVICE, use_fallback=False)
    norms = [m for m in model.modules() if type(m).__name__ == "Qwen3RMSNorm"]
    swapped = sum("reference_kernels" in getattr(m.forward, "__module__", "") or
                  "reference_kernels" in getattr(getattr(m.forward, "__func__", None), "__module__", "") for m in norms)
    log(f"kernelize: {swapped}/{len(norms)} RMSNorms swapped")
    return f"{swapped}/{len(norms)} norms swapped"


ALL_CONFIGS = [("eager", False, False), ("compile", False, True), ("eager+ours", True, False),
               ("compile+ours", True, True), ("compile+ours-always", True, True)]


def chosen(configs):
    return [c for c in ALL_CONFIGS if c[0] == "eager" or c[0] in configs]


def qwen3_prefill(model_factory, kernels_dir, results, lengths, tiny, repeats, configs):
    model = model_factory()
    inputs = {s: torch.randint(0, model.config.vocab_size, (1, s), device=DEVICE) for s in lengths}

    def forward(m, ids):
        with torch.no_grad():
            return m(input_ids=ids, use_cache=False, logits_to_keep=1).logits

    reference = {}
    kernelized = False
    for name, ours, compiled in chosen(configs):
        note = ""
        if ours and not kernelized:
            note = kernelize_qwen3(model, kernels_dir, compile_mode=True)
            kernelized = True
        if ours:
            set_compile_native_limit(model, name)
        torch._dynamo.reset()
        runner = torch.compile(model, dynamic=True) if compiled else model
        for s in lengths:
            ids = inputs[s]
            t0 = time.time()
            out = forward(runner, ids)  # warm-up (and compile)
            sync()
            if name == "eager":
                reference[s] = out.float()
            ms = time_ms(lambda: forward(runner, ids), warmup=2, repeats=repeats)
            results.add("qwen3-8b" if not tiny else "qwen3-tiny", "prefill", f"1x{s}", name, ms,
                        rel_diff(out.float(), reference[s]), f"{note}; first call {time.time() - t0:.1f} s".lstrip("; "))
    del model
    if DEVICE == "cuda":
        torch.cuda.empty_cache()


def qwen3_decode(model_factory, kernels_dir, results, tiny, repeats, configs, prompt=512, steps=64):
    model = model_factory()
    ids = torch.randint(0, model.config.vocab_size, (1, prompt), device=DEVICE)

    def generate(new_tokens: int, compiled: bool):
        with torch.no_grad():
            return model.generate(ids, max_new_tokens=new_tokens, min_new_tokens=new_tokens, do_sample=False,
                                  cache_implementation="static", disable_compile=not compiled, pad_token_id=0)

    reference = None
    kernelized = False
    note = ""
    for name, ours, compiled in chosen(configs):
        if ours and not kernelized:
            note = kernelize_qwen3(model, kernels_dir, compile_mode=True)
            kernelized = True
        if ours:
            set_compile_native_limit(model, name)
        torch._dynamo.reset()
        t0 = time.time()
        tokens = generate(steps + 1, compiled)  # warm-up (and compile)
        sync()
        first = time.time() - t0
        full = time_ms(lambda: generate(steps + 1, compiled), warmup=1, repeats=repeats)
        one = time_ms(lambda: generate(1, compiled), warmup=1, repeats=repeats)
        if reference is None:
            reference = tokens
        agree = (tokens[0, prompt:] == reference[0, prompt:]).float().mean().item()
        results.add("qwen3-8b" if not tiny else "qwen3-tiny", "decode", f"{steps} tokens after {prompt}", name,
                    full - one, float("nan"),
                    f"{(full - one) / steps:.3f} ms/token; greedy tokens equal to eager's: {agree:.0%}; "
                    f"{note}; first call {first:.1f} s".replace("; ;", ";"))
    del model
    if DEVICE == "cuda":
        torch.cuda.empty_cache()


# ---------------------------------------------------------------------------------------------
# LTX-Video block


def ltx_block_forward_with(ours):
    """The block's forward with our kernels; reads the block's own attributes like a kernelize layer."""
    from diffusers.models.transformers import transformer_ltx

    def attention(attn, hidden_states, encoder_hidden_states=None, attention_mask=None, image_rotary_emb=None):
        # LTXVideoAttnProcessor with our RMSNorm (q/k norms across heads) and LTX RoPE.
        batch_size = hidden_states.shape[0]
        if attention_mask is not None:
            attention_mask = attn.prepare_attention_mask(attention_mask, encoder_hidden_states.shape[1], batch_size)
            attention_mask = attention_mask.view(batch_size, attn.heads, -1, attention_mask.shape[-1])
        context = hidden_states if encoder_hidden_states is None else encoder_hidden_states
        query, key, value = attn.to_q(hidden_states), attn.to_k(context), attn.to_v(context)
        query = ours.rms_norm(query, attn.norm_q.weight, attn.norm_q.eps or 1e-6)
        key = ours.rms_norm(key, attn.norm_k.weight, attn.norm_k.eps or 1e-6)
        if image_rotary_emb is not None:
            query, key = ours.ltx_rotary_emb(query, image_rotary_emb[0], image_rotary_emb[1], key)
        query, key, value = (t.unflatten(2, (attn.heads, -1)).transpose(1, 2) for t in (query, key, value))
        hidden_states = torch.nn.functional.scaled_dot_product_attention(query, key, value, attn_mask=attention_mask)
        hidden_states = hidden_states.transpose(1, 2).flatten(2, 3).to(query.dtype)
        return attn.to_out[1](attn.to_out[0](hidden_states))

    def forward(self, hidden_states, encoder_hidden_states, temb, image_rotary_emb=None, encoder_attention_mask=None):
        batch_size = hidden_states.size(0)
        ada_values = self.scale_shift_table[None, None] + temb.reshape(batch_size, temb.size(1),
                                                                       self.scale_shift_table.shape[0], -1)
        shift_msa, scale_msa, gate_msa, shift_mlp, scale_mlp, gate_mlp = ada_values.unbind(dim=2)
        norm_hidden_states = ours.adaln(hidden_states, scale_msa, shift_msa, self.norm1.weight, self.norm1.eps)
        attn_hidden_states = attention(self.attn1, norm_hidden_states, image_rotary_emb=image_rotary_emb)
        hidden_states = hidden_states + attn_hidden_states * gate_msa
        hidden_states = hidden_states + attention(self.attn2, hidden_states, encoder_hidden_states,
                                                  encoder_attention_mask)
        norm_hidden_states = ours.adaln(hidden_states, scale_mlp, shift_mlp, self.norm2.weight, self.norm2.eps)
        ff = self.ff
        projected = ff.net[0].proj(norm_hidden_states)
        ff_output = ff.net[2](ours.gelu_tanh(projected))
        return hidden_states + ff_output * gate_mlp

    assert transformer_ltx.LTXVideoTransformerBlock  # the class this forward mirrors
    return forward


def ltx_block(kernels_dir, results, ours, tiny, repeats):
    from diffusers.models.transformers.transformer_ltx import LTXVideoRotaryPosEmbed, LTXVideoTransformerBlock

    torch.manual_seed(0)
    batch, frames, height, width, dim, heads = (2, 2, 4, 6, 256, 4) if tiny else (2, 7, 32, 33, 2048, 32)
    tokens = frames * height * width  # 7 x 32 x 33 = 7392: the issue's [2, 7392, 2048]
    with torch.device(DEVICE):
        block = LTXVideoTransformerBlock(dim=dim, num_attention_heads=heads, attention_head_dim=dim // heads,
                                         cross_attention_dim=dim).to(torch.bfloat16).eval()
        rope = LTXVideoRotaryPosEmbed(dim=dim, base_num_frames=20, base_height=2048, base_width=2048,
                                      patch_size=1, patch_size_t=1, theta=10000.0)
        hidden = torch.randn(batch, tokens, dim, dtype=torch.bfloat16)
        encoder = torch.randn(batch, 128, dim, dtype=torch.bfloat16)
        temb = torch.randn(batch, 1, 6 * dim, dtype=torch.bfloat16)
        cos, sin = rope(hidden, frames, height, width)
    freqs = (cos, sin)  # float32, as LTXVideoTransformer3DModel passes them
    log(f"LTX block: hidden {list(hidden.shape)}, rope {list(cos.shape)}")

    def run(module):
        with torch.no_grad():
            return module(hidden, encoder, temb, image_rotary_emb=freqs)

    eager_forward = block.forward
    ours_forward = types.MethodType(ltx_block_forward_with(ours), block)
    reference = None
    for name, use_ours, compiled in [("eager", False, False), ("compile", False, True), ("eager+ours", True, False),
                                     ("compile+ours", True, True)]:
        block.forward = ours_forward if use_ours else eager_forward
        torch._dynamo.reset()
        runner = torch.compile(block) if compiled else block
        t0 = time.time()
        out = run(runner)
        sync()
        if reference is None:
            reference = out.float()
        ms = time_ms(lambda: run(runner), warmup=3, repeats=repeats)
        results.add("ltx-video-block", "forward", "x".join(map(str, hidden.shape)), name, ms,
                    rel_diff(out.float(), reference), f"first call {time.time() - t0:.1f} s")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kernels", type=Path, required=True, help="a kernels/ build directory (with build/<variant>/)")
    p.add_argument("--out", type=Path, default=Path("/tmp/out"))
    p.add_argument("--parts", default="prefill,decode,ltx")
    p.add_argument("--lengths", default="512,2048,8192")
    p.add_argument("--repeats", type=int, default=10)
    p.add_argument("--configs", default="compile,eager+ours,compile+ours",
                   help="comma list of: " + ", ".join(c[0] for c in ALL_CONFIGS[1:]))
    p.add_argument("--tiny", action="store_true", help="small configs: check the script, not the GPU")
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    p.add_argument("--kernelize-with", default="kernels", choices=["kernels", "kernelhub"])
    args = p.parse_args()
    global DEVICE, KERNELIZE_WITH
    DEVICE, KERNELIZE_WITH = args.device, args.kernelize_with
    args.out.mkdir(parents=True, exist_ok=True)
    kernels_dir = args.kernels.resolve()
    ours = load_ours(kernels_dir)
    results = Results(args.out / "e2e.csv")
    import transformers

    log("torch", torch.__version__, "transformers", transformers.__version__,
        torch.cuda.get_device_name() if DEVICE == "cuda" else "cpu")
    parts = set(args.parts.split(","))
    configs = set(args.configs.split(","))
    unknown = configs - {c[0] for c in ALL_CONFIGS}
    if unknown:
        p.error(f"unknown --configs {sorted(unknown)}")
    lengths = [int(s) for s in args.lengths.split(",")]
    factory = lambda: build_qwen3(args.tiny)  # noqa: E731
    if "prefill" in parts:
        qwen3_prefill(factory, kernels_dir, results, lengths, args.tiny, args.repeats, configs)
    if "decode" in parts:
        qwen3_decode(factory, kernels_dir, results, args.tiny, args.repeats, configs)
    if "ltx" in parts:
        ltx_block(kernels_dir, results, ours, args.tiny, args.repeats)


if __name__ == "__main__":
    main()
