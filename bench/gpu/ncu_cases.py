#!/usr/bin/env python3
"""One call of each implementation per case, between cudaProfilerStart/Stop, for Nsight Compute.

    ncu --profile-from-start off --clock-control none --cache-control all --csv --page details \\
        python3 bench/gpu/ncu_cases.py --impl ours=BUILD/kernels [--cases rms_norm:512x4096,...] > ncu.csv

bench_ops.py and launch_profile.py give times; where ours is slower than a peer's kernel at the same
bytes, the profiler's counters say why (DRAM throughput, achieved occupancy, what the warps stall
on). Everything is warmed up first (torch.compile's compile and autotuning included), so the
profiled range holds exactly one launch of each implementation per case, in the order printed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_ops  # noqa: E402
import launch_profile  # noqa: E402

CASES = "rms_norm:512x4096,adaln:512x4096,adaln:1024x4096,adaln:1x2048,rms_norm:1024x8192,rope:1024x2048"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--impl", action="append", default=[], help="NAME=kernels build dir (repeatable)")
    p.add_argument("--cases", default=CASES, help="op:TOKENSxHIDDEN, comma-separated")
    p.add_argument("--peers", default="compile,liger")
    p.add_argument("--own-warmup", action="store_true",
                   help="run each implementation once, unprofiled, right before its profiled launch: under "
                   "--cache-control none its inputs are then in L2 from its own call, not from the call before it")
    args = p.parse_args()
    impls = {}
    for spec in args.impl:
        name, _, path = spec.partition("=")
        impls[name] = bench_ops.load_variant(Path(path), name)
    peers = set(args.peers.split(",")) if args.peers != "none" else set()
    runs = []
    for spec in args.cases.split(","):
        op, _, shape = spec.partition(":")
        tokens, hidden = map(int, shape.split("x"))
        case = bench_ops.Case(op, tokens, hidden, torch.bfloat16)
        for name, fn in launch_profile.candidates(case, impls, peers):
            for _ in range(3):  # compile, autotune, first-call work
                fn()
            runs.append((f"{spec} {name}", fn))
    # The first launch Nsight Compute profiles ran about 0.5 us long (2026-12-01: AdaLN 1 x 2048 took
    # 3.14 us first and 2.53 us elsewhere in the order), so a repeat of the first case goes first.
    if runs:
        runs.insert(0, (f"{runs[0][0]}-first-launch", runs[0][1]))
    # The implementations of a case share its inputs. Under --cache-control none the second one found
    # them in L2 from the first one's call, which read them just before (2026-12-01: ours, timed
    # first, gained nothing from "warm" caches and Liger, timed second, 0.4-0.5 us): --own-warmup
    # gives each implementation that call itself, outside the profiled range.
    cudart = torch.cuda.cudart()
    torch.cuda.synchronize()
    cudart.cudaProfilerStart()
    for label, fn in runs:
        if args.own_warmup:
            cudart.cudaProfilerStop()
            fn()
            torch.cuda.synchronize()
            cudart.cudaProfilerStart()
        print(label, file=sys.stderr, flush=True)
        fn()
        torch.cuda.synchronize()
    cudart.cudaProfilerStop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
