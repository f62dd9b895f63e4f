#!/usr/bin/env python3
"""Times the reference kernels against their peers on one GPU, shape by shape.

    python3 bench/gpu/bench_ops.py --impl ours=BUILD/kernels [--impl v0=OTHER/kernels] --out DIR
        [--ops rms_norm,...] [--tokens 1,16,...] [--hidden 128,...] [--dtypes bf16] [--check]
        [--repeat N] [--timing dobench,write,read,graph,warm]

Each --impl is a kernels/ build directory (its build/<cuda variant>/ is imported directly, under its
own op namespace, so two builds of different sources can be timed in one process). Every op and
every peer runs on the same fresh random inputs (never zeros); timing is triton.testing.do_bench's
median (CUDA events, L2 flushed before every run). Next to each shape, a device-to-device copy of
the same number of bytes gives the ceiling measured at that size: the faster of a memcpy and an
elementwise copy kernel (as a CUDA graph the memcpy is a memcpy node, which ran at ~2.7 TB/s at
some sizes where kernels reach ~4.2, 2026-12-01). Bytes are the op's minimum
traffic: every input read once, every output written once (weights and tables included).

Peers: `eager` (the module it replaces, in transformers/diffusers semantics), `F.rms_norm`
(PyTorch's fused kernel, RMSNorm only), `compile` (torch.compile of the eager function, one compile
per hidden size with the token count dynamic; with --compile-per-shape one static compile per shape,
each autotuned at its own size: inductor picks its reduction tile once per kernel, so the dynamic
kernel keeps the tile it timed at the second token count, e.g. 16 rows, at 65536) and `liger`
(Liger-Kernel, where importable).

--check compares each implementation's output with a float64 reference first (relative error,
NaN-poisoned outputs), shape by shape, and records it in the CSV. --repeat N times every
implementation N times in turns and keeps each one's best median: at launch-bound sizes one median
moves by about 0.5 us between runs of identical code (2026-11-30), and a peer's best over several
runs against our single median would favour the peer. --timing times every implementation in
several ways in the same process (bench(): do_bench; its flush with the host kept ahead; a read
flush; a CUDA graph replay; no flush), each as its own impl column (NAME@TIMING). --interleave
times all implementations of a shape and its copy run by run in turns instead (bench_interleaved),
so that drift over time cancels out of their differences. Writes DIR/bench.csv (one row per op,
shape, dtype and implementation) and prints a summary table.
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import math
import os
import re
import statistics
import sys
import time
import traceback
from pathlib import Path

import torch
import torch._dynamo
import torch.nn.functional as F

DT = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
TOKENS = [1, 16, 128, 512, 1024, 4096, 8192, 16384, 32768, 65536]
HIDDEN = [128, 2048, 3072, 4096, 5120, 8192]
OPS = ["rms_norm", "fused_add_rms_norm", "rope", "ltx_rope", "geglu", "gelu_tanh", "adaln"]
HEAD_DIM = 128
EPS = 1e-6


def load_variant(build: Path, alias: str):
    """Imports build/<cuda variant>/ as a package named kh_<alias>."""
    variants = sorted(p for p in (build / "build").glob("torch*") if "-cu" in p.name)
    if not variants:
        raise SystemExit(f"no CUDA variant under {build}/build")
    spec = importlib.util.spec_from_file_location(f"kh_{alias}", variants[0] / "__init__.py",
                                                  submodule_search_locations=[str(variants[0])])
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


# --------------------------------------------------------------------------------------------
# Eager references (the modules' own math) and float64 references


def rms_eager(x, w, eps=EPS):  # transformers Qwen3RMSNorm
    dt = x.dtype
    h = x.float()
    h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps)
    return w * h.to(dt)


def add_rms_eager(x, r, w, eps=EPS):  # Qwen3 decoder layer: residual + hidden, then the norm
    r = x + r
    return rms_eager(r, w, eps), r


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def rope_eager(q, k, cos, sin):  # transformers apply_rotary_pos_emb, unsqueeze_dim=1
    cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
    return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin


def ltx_apply(x, cos, sin):  # diffusers transformer_ltx.apply_rotary_emb
    x_real, x_imag = x.unflatten(2, (-1, 2)).unbind(-1)
    x_rotated = torch.stack([-x_imag, x_real], dim=-1).flatten(2)
    return (x.float() * cos + x_rotated.float() * sin).to(x.dtype)


def ltx_rope_eager(q, k, cos, sin):
    return ltx_apply(q, cos, sin), ltx_apply(k, cos, sin)


def geglu_eager(x):  # vLLM GeluAndMul(approximate="tanh"): gelu(first half) * second half
    d = x.shape[-1] // 2
    return F.gelu(x[..., :d], approximate="tanh") * x[..., d:]


def gelu_eager(x):  # diffusers GELU(approximate="tanh") activation (LTX-Video feed-forward)
    return F.gelu(x, approximate="tanh")


def adaln_eager(x, scale, shift, eps=EPS):  # diffusers LTX: RMSNorm (no weight), then modulate
    dt = x.dtype
    h = x.float()
    h = (h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps)).to(dt)
    return h * (1 + scale) + shift


def gelu_tanh64(x):
    return x * torch.sigmoid(2 * math.sqrt(2 / math.pi) * (x + 0.044715 * x.pow(3)))


def rms64(x, w):
    y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS)
    return y if w is None else y * w


EAGER = {"rms_norm": rms_eager, "fused_add_rms_norm": add_rms_eager, "rope": rope_eager,
         "ltx_rope": ltx_rope_eager, "geglu": geglu_eager, "gelu_tanh": gelu_eager, "adaln": adaln_eager}


# --------------------------------------------------------------------------------------------
# Cases: inputs, minimum bytes, and a callable per implementation


def rope_tables(tokens, dim, dtype, dev):
    pos = torch.arange(tokens, device=dev, dtype=torch.float32)
    inv = 1.0 / (1e6 ** (torch.arange(0, dim, 2, device=dev, dtype=torch.float32) / dim))
    emb = torch.cat([torch.outer(pos, inv)] * 2, dim=-1)
    return emb.cos().to(dtype)[None], emb.sin().to(dtype)[None]


class Case:
    """One op at one shape: inputs, bytes moved, the implementations and a float64 reference."""

    def __init__(self, op, tokens, hidden, dtype, dev="cuda", batch=1):
        self.op, self.tokens, self.hidden, self.dtype, self.batch = op, tokens, hidden, dtype, batch
        if batch != 1 and op != "adaln":
            raise ValueError(f"{op}: a batch of samples is an AdaLN shape only")
        e = torch.tensor([], dtype=dtype).element_size()
        g = lambda *s: torch.randn(*s, device=dev, dtype=dtype)  # noqa: E731
        T, H = tokens, hidden
        if op == "rms_norm":
            self.x, self.w = g(T, H), g(H)
            self.bytes = (2 * T * H + H) * e
        elif op == "fused_add_rms_norm":
            self.x, self.r, self.w = g(T, H), g(T, H), g(H)
            self.bytes = (4 * T * H + H) * e
        elif op == "rope":
            hq = max(1, H // HEAD_DIM)
            hk = max(1, hq // 4)
            # transformers' layout: [B, heads, S, D] views of [B, S, heads, D] projections
            self.q = g(1, T, hq, HEAD_DIM).transpose(1, 2)
            self.k = g(1, T, hk, HEAD_DIM).transpose(1, 2)
            self.cos, self.sin = rope_tables(T, HEAD_DIM, dtype, dev)
            self.bytes = (2 * (hq + hk) * T * HEAD_DIM + 2 * T * HEAD_DIM) * e
            self.shape_note = f"q {hq}x{HEAD_DIM}, k {hk}x{HEAD_DIM}"
        elif op == "ltx_rope":
            self.q, self.k = g(1, T, H), g(1, T, H)
            ang = torch.rand(1, T, H, device=dev) * 6.3
            self.cos, self.sin = ang.cos(), ang.sin()
            self.bytes = 4 * T * H * e + 2 * T * H * 4
        elif op == "geglu":
            self.x = g(T, 2 * H)
            self.bytes = 3 * T * H * e
        elif op == "gelu_tanh":
            self.x = g(T, H)
            self.bytes = 2 * T * H * e
        elif op == "adaln":
            B = batch  # diffusers' per-sample modulation: scale and shift [B, 1, H]
            self.x = g(B, T, H)
            self.scale, self.shift = g(B, 1, H) * 0.5, g(B, 1, H) * 0.5
            self.bytes = (2 * B * T * H + 2 * B * H) * e
        else:
            raise ValueError(op)

    def eager_args(self):
        op = self.op
        if op == "rms_norm":
            return (self.x, self.w)
        if op == "fused_add_rms_norm":
            return (self.x, self.r, self.w)
        if op in ("rope", "ltx_rope"):
            return (self.q, self.k, self.cos, self.sin)
        if op in ("geglu", "gelu_tanh"):
            return (self.x,)
        return (self.x, self.scale, self.shift)

    def ours(self, k):
        """A callable running the kernel package k on this case (outputs preallocated, as the ops take them)."""
        op = self.op
        ops = k.ops
        if op == "rms_norm":
            out = torch.empty_like(self.x)
            return lambda: ops.rms_norm(out, self.x, self.w, EPS), lambda: out
        if op == "fused_add_rms_norm":
            # In place: work on copies so that the case's inputs stay as drawn.
            x, r = self.x.clone(), self.r.clone()
            return lambda: ops.fused_add_rms_norm(x, r, self.w, EPS), lambda: (x, r)
        if op == "rope":
            qo, ko = torch.empty_like(self.q), torch.empty_like(self.k)
            return (lambda: ops.apply_rotary_pos_emb(qo, ko, self.q, self.k, self.cos, self.sin, 1),
                    lambda: (qo, ko))
        if op == "ltx_rope":
            qo, ko = torch.empty_like(self.q), torch.empty_like(self.k)
            return lambda: ops.ltx_rotary_emb(qo, ko, self.q, self.k, self.cos, self.sin), lambda: (qo, ko)
        if op == "geglu":
            out = torch.empty(self.tokens, self.hidden, device=self.x.device, dtype=self.dtype)
            return lambda: ops.gelu_tanh_and_mul(out, self.x), lambda: out
        if op == "gelu_tanh":
            out = torch.empty_like(self.x)
            return lambda: ops.gelu_tanh(out, self.x), lambda: out
        out = torch.empty_like(self.x)
        return lambda: ops.adaln(out, self.x, None, self.scale, self.shift, EPS, False), lambda: out

    def ours_inplace(self, k):
        """RoPE rotating q and k in place (q_out is q), as Liger does: (fn, fetch, reset to the drawn inputs)."""
        q, kk = self.q.clone(), self.k.clone()
        ops = k.ops
        return (lambda: ops.apply_rotary_pos_emb(q, kk, q, kk, self.cos, self.sin, 1), lambda: (q, kk),
                lambda: (q.copy_(self.q), kk.copy_(self.k)))

    def liger(self):
        op = self.op
        try:
            if op == "rms_norm":
                from liger_kernel.ops.rms_norm import LigerRMSNormFunction as Fn
                return lambda: Fn.apply(self.x, self.w, EPS, 0.0, "llama", False)
            if op == "fused_add_rms_norm":
                from liger_kernel.ops.fused_add_rms_norm import LigerFusedAddRMSNormFunction as Fn
                return lambda: Fn.apply(self.x, self.r, self.w, EPS, 0.0, "llama", False)
            if op == "rope":
                from liger_kernel.ops.rope import LigerRopeFunction as Fn
                # Liger rotates q and k in place: time it on copies (the same bytes).
                q, k = self.q.clone(), self.k.clone()
                return lambda: Fn.apply(q, k, self.cos, self.sin)
            if op == "geglu":
                from liger_kernel.ops.geglu import LigerGELUMulFunction as Fn
                # Liger takes gate and up as two tensors (HF gate_proj / up_proj outputs).
                a, b = self.x[:, : self.hidden].contiguous(), self.x[:, self.hidden :].contiguous()
                return lambda: Fn.apply(a, b)
            if op == "adaln":
                from liger_kernel.ops.modulated_rms_norm import LigerModulatedRMSNormFunction as Fn
                return lambda: Fn.apply(self.x, None, self.scale, self.shift, EPS, 0.0, "llama", False)
        except ImportError:
            return None
        return None

    def reference(self):
        """float64 reference of what `ours` returns."""
        op = self.op
        d = lambda t: t.double()  # noqa: E731
        if op == "rms_norm":
            return rms64(d(self.x), d(self.w))
        if op == "fused_add_rms_norm":
            s = (self.x + self.r).double()  # the rounded sum, as the op keeps it
            return (rms64(s, d(self.w)), s)
        if op == "rope":
            c, s = d(self.cos).unsqueeze(1), d(self.sin).unsqueeze(1)
            return tuple(d(t) * c + rotate_half(d(t)) * s for t in (self.q, self.k))
        if op == "ltx_rope":
            def app(x):
                x = d(x)
                re, im = x.unflatten(2, (-1, 2)).unbind(-1)
                return x * d(self.cos) + torch.stack([-im, re], dim=-1).flatten(2) * d(self.sin)
            return (app(self.q), app(self.k))
        if op == "geglu":
            x = d(self.x)
            return gelu_tanh64(x[:, : self.hidden]) * x[:, self.hidden :]
        if op == "gelu_tanh":
            return gelu_tanh64(d(self.x))
        return rms64(d(self.x), None) * (1 + d(self.scale)) + d(self.shift)


def peer_calls(case, peers, compiled):
    """(name, callable) of each peer in `peers` that runs `case`; `compiled` is torch.compile(EAGER[case.op])."""
    op, calls = case.op, []
    if "eager" in peers:
        calls.append(("eager", lambda: EAGER[op](*case.eager_args())))
    if "F.rms_norm" in peers and op == "rms_norm":
        calls.append(("F.rms_norm", lambda: F.rms_norm(case.x, (case.hidden,), case.w, EPS)))
    if "compile" in peers:
        calls.append(("compile", lambda: compiled(*case.eager_args())))
    if "liger" in peers and (lf := case.liger()) is not None:
        calls.append(("liger", lf))
    return calls


def timed_name(impl: str, timing: str, timings: list[str]) -> str:
    """The CSV's impl column: the implementation's name under the first --timing, NAME@TIMING otherwise."""
    return impl if timing == timings[0] else f"{impl}@{timing}"


def failure_note(e: Exception) -> str:
    """The CSV note for an implementation that could not run a shape: the exception's type and first line."""
    return f"{type(e).__name__}: {str(e).splitlines()[0][:120] if str(e) else ''}"


def rel_error(out, ref):
    outs = out if isinstance(out, tuple) else (out,)
    refs = ref if isinstance(ref, tuple) else (ref,)
    worst = 0.0
    for o, r in zip(outs, refs):
        if torch.isnan(o).any():
            return float("nan")
        worst = max(worst, ((o.double() - r).norm() / r.norm().clamp_min(1e-300)).item())
    return worst


def poison(fetch):
    for t in fetch() if isinstance(fetch(), tuple) else (fetch(),):
        t.fill_(float("nan"))


# --------------------------------------------------------------------------------------------


TIMINGS = ("dobench", "write", "read", "graph", "warm")  # --timing: how each call is timed (bench below)
FLUSH = []  # the 256 MB buffer that bench_events flushes L2 with
GRAPHS = {}  # fn -> the replay of its CUDA graph, captured once (timing "graph")


def bench(fn, quick, timing="dobench"):
    """Median ms of fn.

    dobench: triton's do_bench, L2 flushed by a 256 MB memset before every run (the default; what
      every results CSV before 2026-12-01 used). The other timings use bench_events:
    write: do_bench's memset, with the host kept ahead of the GPU (bench_events), so that the events
      see the GPU's work alone;
    read: a 256 MB read flush instead, which leaves clean lines in L2 (do_bench's memset leaves
      dirty ones, which a kernel's misses must write back first).
    graph: do_bench's memset, then one replay of a CUDA graph holding the call: no Python, guards or
      dispatcher between the events, and every implementation reaches the GPU the same way.
    warm: no flush at all: the call's own inputs, outputs and code stay in L2 from its last run.
    """
    if timing == "dobench":
        from triton.testing import do_bench

        return do_bench(fn, warmup=5 if quick else 10, rep=15 if quick else 40, return_mode="median")  # ms
    if timing == "graph":
        if fn not in GRAPHS:
            GRAPHS[fn] = as_graph(fn)
        fn = GRAPHS[fn]
    return bench_events(fn, quick, timing)


def flush_buffers():
    """The 256 MB buffer that the timings flush L2 with, and a 4-byte sink for the read flush."""
    if not FLUSH:
        FLUSH.append(torch.empty(64 * 1024**2, device="cuda"))
    return FLUSH[0], torch.empty((), device=FLUSH[0].device, dtype=FLUSH[0].dtype)


def flush_and_spin(timing, flush, sink):
    """Enqueues the flush of `timing` (a read, none for `warm`, else the memset), then a ~50 us spin."""
    if timing == "read":
        torch.sum(flush, 0, out=sink)  # reads all of it, writes 4 bytes
    elif timing != "warm":
        flush.zero_()
    torch.cuda._sleep(100_000)  # clock cycles: about 50 us at the H200's 1.98 GHz


def bench_events(fn, quick, timing):
    """Median ms of fn between two CUDA events. Before each run the stream flushes L2 (unless `warm`)
    and then spins for about 50 us, so that the host has enqueued both events and the call before the
    GPU reaches the first event: what lies between them is the GPU's work alone, never host time."""
    flush, sink = flush_buffers()
    for _ in range(5 if quick else 10):
        fn()
    runs = 40 if quick else 100
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(runs)]
    for begin, end in events:
        flush_and_spin(timing, flush, sink)
        begin.record()
        fn()
        end.record()
    torch.cuda.synchronize()
    return statistics.median(b.elapsed_time(e) for b, e in events)


def bench_interleaved(fns, quick, timing):
    """Median ms of each of fns, timed run by run in turns (--interleave): run i times every fn once,
    each after its own flush and spin as in bench_events, starting one further along the list each
    run. A drift of the GPU's clocks or of the machine's state over the seconds one implementation's
    100 runs take then moves every implementation alike, where timing them one after another (the
    default) leaves it in their difference: two builds of identical code differed there by a median
    of 1.5% and up to 10% (2026-12-02)."""
    if timing == "graph":
        for fn in fns:
            if fn not in GRAPHS:
                GRAPHS[fn] = as_graph(fn)
        fns = [GRAPHS[fn] for fn in fns]
    elif timing == "dobench":
        timing = "write"  # do_bench cannot interleave: its memset flush, timed with events
    flush, sink = flush_buffers()
    for fn in fns:
        for _ in range(5 if quick else 10):
            fn()
    runs = 40 if quick else 100
    events = [[(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(runs)]
              for _ in fns]
    for run in range(runs):
        for j in range(len(fns)):
            i = (run + j) % len(fns)
            flush_and_spin(timing, flush, sink)
            begin, end = events[i][run]
            begin.record()
            fns[i]()
            end.record()
        if run % 20 == 19:
            torch.cuda.synchronize()  # keep the queue short: the host stays ahead without filling it
    torch.cuda.synchronize()
    return [statistics.median(b.elapsed_time(e) for b, e in ev) for ev in events]


def as_graph(fn):
    """fn captured in a CUDA graph, as a callable that replays it (timing "graph"). At launch-bound
    sizes do_bench puts ours 0.6-1 us further behind inductor's kernels than their durations under
    Nsight Compute differ (2026-11-30), and this separates the launch path from the kernel."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up off the capture (compile, autotune, lazy loading)
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    return graph.replay


TIMING_OF_COPY = ["dobench"]  # the first --timing, set once in main()


def copy_buffers(nbytes, dev="cuda"):
    """Source and destination of a copy that moves nbytes (nbytes/2 read, nbytes/2 written)."""
    src = torch.randn(max(1, nbytes // 4), device=dev, dtype=torch.float16)
    return src, torch.empty_like(src)


def copy_call(nbytes):
    """The elementwise copy kernel of copy_ceiling, as one callable (--interleave times it beside the
    implementations; as a CUDA graph the memcpy is a slower memcpy node, so the kernel is the one)."""
    src, dst = copy_buffers(nbytes)
    return lambda: torch.mul(src, 1, out=dst)


def copy_ceiling(nbytes, dev="cuda"):
    """(ms, bytes moved) of the faster of two copies of nbytes/2 (each moves nbytes, read + write):
    a memcpy, and an SM kernel (torch.mul by one: PyTorch's vectorised elementwise kernel)."""
    src, dst = copy_buffers(nbytes, dev)
    memcpy = bench(lambda: dst.copy_(src), True, TIMING_OF_COPY[0])
    kernel = bench(lambda: torch.mul(src, 1, out=dst), True, TIMING_OF_COPY[0])
    return min(memcpy, kernel), 4 * src.numel()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--impl", action="append", default=[], help="NAME=kernels build dir (repeatable)")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--ops", default=",".join(OPS))
    p.add_argument("--tokens", default=",".join(map(str, TOKENS)))
    p.add_argument("--hidden", default=",".join(map(str, HIDDEN)))
    p.add_argument("--dtypes", default="bf16")
    p.add_argument("--peers", default="eager,F.rms_norm,compile,liger")
    p.add_argument("--check", action="store_true", help="float64 check of every implementation at every shape")
    p.add_argument("--quick", action="store_true", help="shorter do_bench runs")
    p.add_argument("--timing", default="dobench",
                   help="comma-separated, of " + ", ".join(TIMINGS) + " (see bench()); every implementation is "
                   "timed each way, as IMPL for the first and IMPL@TIMING for the others; the copy takes the first")
    p.add_argument("--budget-s", type=float, default=1e9, help="stop starting new shapes after this long")
    p.add_argument("--csv-name", default="bench.csv")
    p.add_argument("--compile-per-shape", action="store_true",
                   help="compile the `compile` peer anew at every shape (static shapes, autotuned at that size)")
    p.add_argument("--shapes", default="",
                   help="OP:TOKENSxHIDDEN or OP:BATCHxTOKENSxHIDDEN,... (e.g. rms_norm:65536x128, adaln:2x5000x2560: "
                   "AdaLN over 2 samples of 5000 tokens, scale and shift [2, 1, 2560]): only these shapes, instead of the "
                   "product of --ops, --tokens and --hidden")
    p.add_argument("--interleave", action="store_true",
                   help="time all implementations and the copy run by run in turns (bench_interleaved), "
                   "not one after another; dobench becomes write (the same flush, timed with events)")
    p.add_argument("--repeat", type=int, default=1,
                   help="time every implementation (and the copy) this many times, in turns (every other round "
                   "in reverse order); keep each one's best median")
    args = p.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    timings = args.timing.split(",")
    if any(t not in TIMINGS for t in timings):
        p.error(f"--timing: each of {', '.join(TIMINGS)}, got {args.timing}")
    TIMING_OF_COPY[0] = timings[0]
    torch.manual_seed(int(os.environ.get("BENCH_SEED", "0")))
    torch._dynamo.config.cache_size_limit = 256
    peers = set(args.peers.split(",")) if args.peers != "none" else set()
    impls = {}
    for spec in args.impl:
        name, path = spec.split("=", 1)
        impls[name] = load_variant(Path(path), name)
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}, impls {list(impls)}", flush=True)
    big = 2 * 1024**3
    ms, moved = copy_ceiling(big)
    print(f"copy ceiling: {moved / ms / 1e6:.0f} GB/s ({moved / 1e9:.1f} GB moved in {ms:.3f} ms)", flush=True)

    rows = []
    fields = ["op", "dtype", "tokens", "hidden", "impl", "median_us", "bytes", "gbps", "copy_us", "copy_gbps",
              "frac_of_copy", "rel_err", "note", "batch"]
    csv_path = args.out / args.csv_name
    fh = open(csv_path, "w", newline="")
    writer = csv.DictWriter(fh, fieldnames=fields)
    writer.writeheader()
    start = time.monotonic()
    ops = args.ops.split(",")
    tokens = [int(t) for t in args.tokens.split(",")]
    hidden = [int(h) for h in args.hidden.split(",")]
    only = None  # --shapes: (op, tokens, hidden) -> the batch sizes to time
    if args.shapes:
        only = {}
        for spec in args.shapes.split(","):
            m = re.fullmatch(r"(\w+):(?:(\d+)x)?(\d+)x(\d+)", spec.strip())
            if m is None:
                p.error(f"--shapes: OP:TOKENSxHIDDEN or OP:BATCHxTOKENSxHIDDEN,..., got {spec}")
            op, batch = m.group(1), int(m.group(2) or 1)
            if op not in OPS:
                p.error(f"--shapes: ops are {', '.join(OPS)}")
            if batch != 1 and op != "adaln":
                p.error(f"--shapes: a batch of samples is an AdaLN shape only, got {spec}")
            only.setdefault((op, int(m.group(3)), int(m.group(4))), set()).add(batch)
        ops = [op for op in OPS if any(o == op for o, _, _ in only)]
        tokens = sorted({t for _, t, _ in only})
        hidden = sorted({h for _, _, h in only})
    for dname in args.dtypes.split(","):
        dtype = DT[dname]
        for H in hidden:
            torch._dynamo.reset()  # one compile per hidden size, the token count becomes dynamic
            compiled = {op: torch.compile(EAGER[op]) for op in ops}
            for T in tokens:
                if only is not None and not any((op, T, H) in only for op in ops):
                    continue
                if args.compile_per_shape:
                    torch._dynamo.reset()
                    compiled = {op: torch.compile(EAGER[op], dynamic=False) for op in ops}
                if time.monotonic() - start > args.budget_s:
                    print(f"budget reached: stopping before {dname} H={H} T={T}", flush=True)
                    break
                for op, B in ((op, B) for op in ops for B in (sorted(only.get((op, T, H), ())) if only else [1])):
                    try:
                        case = Case(op, T, H, dtype, batch=B)
                    except torch.OutOfMemoryError:
                        print(f"{op} {T}x{H}: out of memory, skipped", flush=True)
                        continue
                    cms, cbytes = copy_ceiling(case.bytes)
                    ref = case.reference() if args.check else None
                    candidates = []  # (name, fn, fetch, reset): reset, for in-place calls, restores the inputs
                    for name, k in impls.items():
                        fn, fetch = case.ours(k)
                        reset = None
                        if op == "fused_add_rms_norm":  # in place: each check starts from the drawn inputs
                            reset = lambda f=fetch, c=case: tuple(t.copy_(s) for t, s in zip(f(), (c.x, c.r)))
                        candidates.append((name, fn, fetch, reset))
                        if op == "rope":  # in place as well, the form Liger's kernel takes
                            candidates.append((f"{name}-inplace", *case.ours_inplace(k)))
                    candidates += [(name, fn, None, None) for name, fn in peer_calls(case, peers, compiled[op])]
                    errs, notes, best = {}, {}, {}
                    for name, fn, fetch, reset in candidates:
                        errs[name], notes[name] = "", ""
                        try:
                            if ref is not None and fetch is not None:  # ours: outputs poisoned first
                                if reset is not None:  # in place: one call from the drawn inputs
                                    reset()
                                else:
                                    poison(fetch)
                                fn()
                                errs[name] = f"{rel_error(fetch(), ref):.3g}"
                            fn()
                        except Exception as e:  # a peer that cannot run this shape
                            notes[name] = failure_note(e)
                            print(f"  {op} {T}x{H} {name}: {notes[name]}", flush=True)
                            if os.environ.get("BENCH_TRACE"):
                                traceback.print_exc()
                    # --repeat: rounds over all implementations in turn, each keeping its best median,
                    # so that every implementation gets the same statistic over the same stretch of time.
                    # Every other round runs them in reverse order: timed first in every round, ours
                    # measured up to 10% shorter than a build of the same code timed later (2026-12-01,
                    # 1024-16384 tokens, where the data sits in L2).
                    for round_ in range(args.repeat if args.interleave else 0):
                        live = [(n, fn) for n, fn, _, _ in candidates if not notes[n]]
                        if round_ == 0:
                            copy_fn = copy_call(case.bytes)
                        for timing in timings:
                            try:
                                medians = bench_interleaved([fn for _, fn in live] + [copy_fn], args.quick, timing)
                            except Exception as e:
                                print(f"  {op} {T}x{H}: interleaved timing failed: {failure_note(e)}", flush=True)
                                continue
                            for (name, _), ms in zip(live, medians):
                                key = timed_name(name, timing, timings)
                                best[key] = min(best.get(key, float("inf")), ms)
                            if timing == timings[0]:
                                cms = min(cms, medians[-1]) if round_ else medians[-1]
                    for round_ in range(0 if args.interleave else args.repeat):
                        for name, fn, _, _ in candidates if round_ % 2 == 0 else candidates[::-1]:
                            for timing in timings:
                                if notes[name]:
                                    break
                                key = timed_name(name, timing, timings)
                                try:
                                    best[key] = min(best.get(key, float("inf")), bench(fn, args.quick, timing))
                                except Exception as e:
                                    notes[name] = failure_note(e)
                    GRAPHS.clear()
                    if args.repeat > 1 and not args.interleave:
                        cms = min([cms] + [copy_ceiling(case.bytes)[0] for _ in range(args.repeat - 1)])
                    for key, name in ((timed_name(n, t, timings), n) for n, _, _, _ in candidates for t in timings):
                        ms = best.get(key, float("nan")) if not notes[name] else float("nan")
                        row = {"op": op, "dtype": dname, "tokens": T, "hidden": H, "batch": B, "impl": key,
                               "median_us": f"{ms * 1e3:.2f}", "bytes": case.bytes,
                               "gbps": f"{case.bytes / ms / 1e6:.0f}" if ms == ms else "",
                               "copy_us": f"{cms * 1e3:.2f}", "copy_gbps": f"{cbytes / cms / 1e6:.1f}",
                               "frac_of_copy": f"{cms / ms:.3f}" if ms == ms else "",
                               "rel_err": errs[name], "note": notes[name]}
                        rows.append(row)
                        writer.writerow(row)
                    fh.flush()
                    line = " ".join(f"{r['impl']}={float(r['median_us']):.1f}"
                                    for r in rows[-len(candidates) * len(timings):])
                    print(f"{dname} {op:18s} {B}x{T:6d}x{H:<5d} {case.bytes / 1e6:9.2f}MB copy={cms * 1e3:.1f}us | {line}",
                          flush=True)
                    del case
            torch.cuda.empty_cache()
    fh.close()
    print(f"wrote {csv_path} ({len(rows)} rows) in {time.monotonic() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
