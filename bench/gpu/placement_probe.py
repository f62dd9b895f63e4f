#!/usr/bin/env python3
"""Does AdaLN's time follow where its buffers lie? (issue 8, hidden 5120)

    python3 bench/gpu/placement_probe.py --impl ours=BUILD/kernels [--impl alt=...] --out DIR

A run on 2026-11-30 measured AdaLN at 65536 x 5120 at 358 us in one process and 406-410 us in others, with
identical PTX, while RMSNorm at the same shape (same tile, same bytes) ran at the copy bandwidth.
Here one process times the same kernel on the same shape with x, out, scale and shift placed
differently: scale and shift as the benchmark draws them, adjacent in one buffer, 2 MB apart,
one tensor for both, and x/out shifted by a row, 64 KB or 2 MB inside a larger allocation. RMSNorm
(its weight where scale lies) runs next to each as the control. If the time follows a placement,
the cause is in the memory system, not the code. Writes DIR/placement.csv.
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_ops  # noqa: E402

SHAPES = ((65536, 5120), (16384, 5120), (65536, 4096), (8192, 5120))
ELEMS_2MB = 1 << 20  # bf16 elements in 2 MB


def modulation(kind: str, hidden: int, dev: str):
    """scale, shift as [1, 1, H] bf16 views, placed as `kind` says."""
    g = lambda n: torch.randn(n, device=dev, dtype=torch.bfloat16) * 0.5  # noqa: E731
    if kind == "drawn":  # as bench_ops draws them: two small allocations
        return g(hidden).view(1, 1, hidden), g(hidden).view(1, 1, hidden)
    if kind == "adjacent":
        buf = g(2 * hidden)
        return buf[:hidden].view(1, 1, hidden), buf[hidden:].view(1, 1, hidden)
    if kind == "2mb-apart":
        buf = g(2 * ELEMS_2MB)
        return buf[:hidden].view(1, 1, hidden), buf[ELEMS_2MB : ELEMS_2MB + hidden].view(1, 1, hidden)
    if kind == "one-tensor":
        t = g(hidden).view(1, 1, hidden)
        return t, t
    raise ValueError(kind)


def placed(tokens: int, hidden: int, offset: int, dev: str, fill: bool):
    """A [1, T, H] bf16 view `offset` elements into a larger allocation."""
    base = torch.empty(tokens * hidden + offset, device=dev, dtype=torch.bfloat16)
    v = base[offset:].view(1, tokens, hidden)
    if fill:
        v.normal_()
    return v


COMPILED = {}


def timed_row(fn, timing, name, op, tokens, hidden, kind, x, out, scale, shift, x_off, out_off, copy_ms):
    us = bench_ops.bench(fn, False, timing) * 1e3
    row = {"impl": name, "op": op, "tokens": tokens, "hidden": hidden, "modulation": kind, "x_offset": x_off,
           "out_offset": out_off, "x_addr_mod_2mb": x.data_ptr() % (2 << 20),
           "out_addr_mod_2mb": out.data_ptr() % (2 << 20), "shift_minus_scale": shift.data_ptr() - scale.data_ptr(),
           "median_us": round(us, 2), "frac_of_copy": round(copy_ms * 1e3 / us, 3)}
    print(" ".join(f"{k}={v}" for k, v in row.items()), flush=True)
    return row


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--impl", action="append", default=[], help="NAME=kernels build dir (repeatable)")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--shapes", default=",".join(f"{t}x{h}" for t, h in SHAPES))
    p.add_argument("--timing", default="dobench", choices=bench_ops.TIMINGS, help="as bench_ops.py's --timing")
    p.add_argument("--compile", action="store_true",
                   help="also time torch.compile's RMSNorm on each placement's x (its output placed by torch)")
    args = p.parse_args()
    impls = {}
    for spec in args.impl:
        name, _, path = spec.partition("=")
        impls[name] = bench_ops.load_variant(Path(path), name)
    dev = "cuda"
    rows = []
    for shape in args.shapes.split(","):
        tokens, hidden = map(int, shape.split("x"))
        nbytes = (2 * tokens * hidden + 2 * hidden) * 2
        copy_ms, _ = bench_ops.copy_ceiling(nbytes)
        configs = [("drawn", 0, 0), ("adjacent", 0, 0), ("2mb-apart", 0, 0), ("one-tensor", 0, 0),
                   ("drawn", hidden, 0), ("drawn", 0, hidden), ("drawn", 32768, 32768), ("drawn", ELEMS_2MB, 0),
                   ("drawn", 0, ELEMS_2MB), ("drawn", 0, 0)]
        for kind, x_off, out_off in configs:
            x = placed(tokens, hidden, x_off, dev, True)
            out = placed(tokens, hidden, out_off, dev, False)
            scale, shift = modulation(kind, hidden, dev)
            runs = list(impls.items()) + ([("compile", None)] if args.compile else [])
            for name, k in runs:
                if k is None:  # the peer: one compiled function, recompiled for each new x only if guards fail
                    compiled = COMPILED.setdefault("rms", torch.compile(bench_ops.rms_eager))
                    calls = {"rms_norm": lambda: compiled(x.view(tokens, hidden), scale.view(hidden))}
                    for op, fn in calls.items():
                        rows.append(timed_row(fn, args.timing, name, op, tokens, hidden, kind, x, out, scale, shift,
                                              x_off, out_off, copy_ms))
                    continue
                ops = k.ops
                calls = {
                    "adaln": lambda: ops.adaln(out, x, None, scale, shift, bench_ops.EPS, False),
                    "rms_norm": lambda: ops.rms_norm(out.view(tokens, hidden), x.view(tokens, hidden),
                                                     scale.view(hidden), bench_ops.EPS),
                }
                for op, fn in calls.items():
                    rows.append(timed_row(fn, args.timing, name, op, tokens, hidden, kind, x, out, scale, shift,
                                          x_off, out_off, copy_ms))
            del x, out, scale, shift
            torch.cuda.empty_cache()
    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / "placement.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
