#!/usr/bin/env python3
"""What each implementation launches at launch-bound sizes, and for how long each kernel runs.

    python3 bench/gpu/launch_profile.py --impl ours=BUILD/kernels --out DIR [--cases adaln:1x2048,rope:16x5120]

bench_ops.py's CUDA-event times include the launch and everything between the two events. Here
torch.profiler (CUPTI) records every kernel of 20 calls, each after the same L2 flush, so a gap to a
peer splits into: more kernels per call, or a longer kernel, or neither (then it is launch latency
or the time before the kernel starts). Writes DIR/launch_profile.csv: one row per case,
implementation and kernel (kernels per call, mean and median kernel time in us) and the
implementation's do_bench median next to it.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_ops  # noqa: E402

CASES = ("adaln:1x128,adaln:1x2048,adaln:1x4096,adaln:16x4096,rms_norm:1x2048,rms_norm:16x4096,"
         "rope:1x2048,rope:16x128,rope:16x5120,rope:16x8192,geglu:1x8192,gelu_tanh:16x4096")
ITERS = 20


def candidates(case: bench_ops.Case, impls: dict, peers: set[str]):
    ours = [(name, case.ours(k)[0]) for name, k in impls.items()]
    if case.op == "rope":  # also in place, the form Liger's kernel takes
        ours += [(f"{name}-inplace", case.ours_inplace(k)[0]) for name, k in impls.items()]
    # Static shapes: a dynamic recompile would keep the reduction tile inductor timed at the first
    # shape, not the one it picks for this case (bench/gpu/NOTES.md, "Timing").
    return ours + bench_ops.peer_calls(case, peers, torch.compile(bench_ops.EAGER[case.op], dynamic=False))


def profile(fn, flush: torch.Tensor) -> dict[str, list[float]]:
    for _ in range(3):  # compile, autotune, first-call work
        fn()
    torch.cuda.synchronize()
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts) as prof:
        for _ in range(ITERS):
            flush.zero_()
            fn()
        torch.cuda.synchronize()
    kernels: dict[str, list[float]] = {}
    for e in prof.events():
        if e.device_type != torch.autograd.DeviceType.CUDA:
            continue
        kernels.setdefault(e.name, []).append(e.time_range.elapsed_us())
    return kernels


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--impl", action="append", default=[], help="NAME=kernels build dir (repeatable)")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--cases", default=CASES, help="op:TOKENSxHIDDEN, comma-separated")
    p.add_argument("--peers", default="eager,compile,liger")
    args = p.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    impls = {}
    for spec in args.impl:
        name, path = spec.split("=", 1)
        impls[name] = bench_ops.load_variant(Path(path), name)
    peers = set(args.peers.split(",")) if args.peers != "none" else set()
    flush = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int32, device="cuda")  # as do_bench's
    # The flush kernel itself, to leave out of every implementation's list.
    flush_names = set(profile(lambda: None, flush))
    rows = []
    for spec in args.cases.split(","):
        op, shape = spec.split(":")
        tokens, hidden = (int(v) for v in shape.split("x"))
        case = bench_ops.Case(op, tokens, hidden, torch.bfloat16)
        for name, fn in candidates(case, impls, peers):
            try:
                kernels = profile(fn, flush)
                median_us = bench_ops.bench(fn, False) * 1e3
            except Exception as e:  # a peer that cannot run this shape
                print(f"{spec} {name}: {type(e).__name__}: {str(e).splitlines()[0][:100] if str(e) else ''}")
                continue
            ours = {k: v for k, v in kernels.items() if k not in flush_names}
            parts = []
            for kname, times in sorted(ours.items(), key=lambda kv: -sum(kv[1])):
                rows.append({"op": op, "tokens": tokens, "hidden": hidden, "impl": name, "kernel": kname[:160],
                             "per_call": f"{len(times) / ITERS:.2f}", "mean_us": f"{statistics.mean(times):.2f}",
                             "median_us": f"{statistics.median(times):.2f}", "do_bench_us": f"{median_us:.2f}"})
                parts.append(f"{len(times) / ITERS:.0f}x {statistics.median(times):.2f}us {kname[:60]}")
            print(f"{spec:18s} {name:8s} do_bench {median_us:6.2f} us | " + " ; ".join(parts), flush=True)
    path = args.out / "launch_profile.csv"
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]) if rows else ["op"])
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {path} ({len(rows)} rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
