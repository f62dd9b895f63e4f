#!/usr/bin/env python3
"""Plots and tables from bench_ops.py's CSV (runs anywhere; needs matplotlib for the plots).

    python3 bench/gpu/plot_bench.py bench/results/h200-DATE.csv --png-dir bench/results [--table]

One PNG per op and dtype: achieved GB/s (the op's minimum bytes over the median time) against bytes
moved, one line per implementation (the best hidden size at each byte count is not picked: every
shape is a point, lines join them in order of bytes), the per-size device-to-device copy drawn as
the ceiling. --table prints a Markdown summary: per op, our fraction of the copy ceiling at the
largest shapes (the ceiling at a size: the run's fastest copy of that size or less), our worst and
median ratio to the best peer, and where we lose. A peer that works in place (IN_PLACE_PEERS: Liger's
RoPE) is compared with our in-place form, where the CSV has one. --label IMPL=LEGEND renames a line.

--peers-from OTHER.csv (repeatable) takes each peer's time at each shape as its best over this CSV
and the others (same GPU kind). A peer whose Python-side launch outlasts do_bench's L2 flush
(torch.compile's guards, Liger's autograd wrapper: seen at 20-100 us on a slow host) is timed by
the host, so a run can only overstate a peer's time, never understate it: its best over several
runs is the fair bar.
"""

from __future__ import annotations

import argparse
import csv
import math
import statistics
from collections import defaultdict
from pathlib import Path

PEERS = ("eager", "F.rms_norm", "compile", "liger")
# Peers whose form of an op writes over its inputs, where ours also runs out of place: their ratio is
# taken against our in-place form (IMPL-inplace), the same semantics. Liger rotates q and k in place;
# transformers' apply_rotary_pos_emb, and so eager, compile and our default form, return new tensors.
# An out-of-place output costs a write-back per line it allocates under the flush's dirty L2
# (bench/gpu/NOTES.md, "Timing"), which an in-place one does not.
IN_PLACE_PEERS = {"rope": {"liger"}}


def load(path: Path):
    rows = list(csv.DictReader(open(path)))
    for r in rows:
        r["tokens"], r["hidden"], r["bytes"] = int(r["tokens"]), int(r["hidden"]), int(r["bytes"])
        r["us"] = float(r["median_us"]) if r["median_us"] not in ("", "nan") else math.nan
        # the copy of the same bytes, in us (older CSVs: from copy_gbps)
        r["copy_us"] = float(r["copy_us"]) if r.get("copy_us") else r["bytes"] / float(r["copy_gbps"] or "nan") / 1e3
        r["copy_gbps"] = r["bytes"] / r["copy_us"] / 1e3
    return rows


def with_best_peers(rows, others):
    """rows, each peer's time replaced by its best at that shape over rows and the other runs."""
    best = {}
    for r in [*rows, *(o for other in others for o in other)]:
        if r["impl"] in PEERS and r["us"] == r["us"]:
            key = (r["op"], r["dtype"], r["tokens"], r["hidden"], r["impl"])
            best[key] = min(best.get(key, math.inf), r["us"])
    out = []
    for r in rows:
        key = (r["op"], r["dtype"], r["tokens"], r["hidden"], r["impl"])
        out.append({**r, "us": best[key]} if key in best else r)
    return out


def copy_ceiling(rows):
    """bytes -> GB/s: the fastest copy of that size or less in the run. As CUDA graphs the copy of some
    sizes runs at ~2.7 TB/s where its neighbours reach 4.2 (65536 x 4096; bench/gpu/NOTES.md,
    "Timing"), which would put an op over 1.0 of "the copy"; a copy's bandwidth only grows with its size."""
    ceiling, fastest = {}, 0.0
    for nbytes, gbps in sorted({(r["bytes"], r["copy_gbps"]) for r in rows}):
        fastest = max(fastest, gbps)
        ceiling[nbytes] = fastest
    return ceiling


def by_shape(rows):
    shapes = defaultdict(dict)
    for r in rows:
        shapes[(r["op"], r["dtype"], r["tokens"], r["hidden"])][r["impl"]] = r
    return shapes


def plot(rows, png_dir: Path, ours: str, labels: dict[str, str]):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = defaultdict(list)
    for r in rows:
        groups[(r["op"], r["dtype"])].append(r)
    written = []
    for (op, dtype), rs in sorted(groups.items()):
        fig, ax = plt.subplots(figsize=(8, 5))
        impls = sorted({r["impl"] for r in rs}, key=lambda n: (n != ours, n))
        for impl in impls:
            pts = sorted((r["bytes"], r["bytes"] / r["us"] / 1e3) for r in rs
                         if r["impl"] == impl and r["us"] == r["us"])
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-" if impl == ours else ".-",
                        label=labels.get(impl, impl),
                        linewidth=2 if impl == ours else 1, markersize=4 if impl == ours else 3, alpha=0.9)
        copy = sorted(copy_ceiling(rs).items())
        ax.plot([c[0] for c in copy], [c[1] for c in copy], "k--", label="copy (fastest of that size or less)",
                linewidth=1)
        ax.set_xscale("log")
        ax.set_xlabel("bytes moved (minimum traffic of the op)")
        ax.set_ylabel("achieved GB/s")
        ax.set_title(f"{op} ({dtype}) on H200: tokens x hidden sweep")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
        fig.tight_layout()
        path = png_dir / f"h200-{op}-{dtype}.png"
        fig.savefig(path, dpi=90)
        plt.close(fig)
        written.append(path)
    return written


def table(rows, ours: str, twin: str | None = None, margin: float = 0.02):
    """Per op: the fraction of the copy at >= 64 MB, the worst and median ratio to the best peer at
    >= 1 MB, how many of those shapes are behind (and how many by more than `margin`: two builds of
    the same code differed by a median 1.5% at LTX RoPE's 1-512 tokens, 2026-12-02), and the worst
    gap in us below 1 MB (the goal's launch-bound bar). With a twin (a second build of the same code,
    timed in the same rounds) our time at a shape is the better of the two: four timings of the same
    code."""
    shapes = by_shape(rows)
    ceiling = copy_ceiling(rows)
    per_op = defaultdict(list)

    def best_of(impls, *names):
        times = [impls[n]["us"] for n in names if n in impls and impls[n]["us"] == impls[n]["us"]]
        return min(times) if times else math.nan

    for (op, dtype, t, h), impls in shapes.items():
        if ours not in impls or impls[ours]["us"] != impls[ours]["us"]:
            continue
        peers = {n: r["us"] for n, r in impls.items() if n in PEERS and r["us"] == r["us"]}
        if not peers:
            continue
        o = impls[ours]
        out_of_place = best_of(impls, ours, *([twin] if twin else []))
        in_place = best_of(impls, f"{ours}-inplace", *([f"{twin}-inplace"] if twin else []))
        # Our time in each peer's semantics; the shape's ratio is the worst over the peers.
        mine = {n: in_place if n in IN_PLACE_PEERS.get(op, ()) and in_place == in_place else out_of_place
                for n in peers}
        best_name = max(peers, key=lambda n: mine[n] / peers[n])
        per_op[(op, dtype)].append({
            "tokens": t, "hidden": h, "bytes": o["bytes"], "us": mine[best_name], "best": best_name,
            "best_us": peers[best_name], "ratio": mine[best_name] / peers[best_name],
            "frac": o["bytes"] / o["us"] / 1e3 / ceiling[o["bytes"]],
            "gbps": o["bytes"] / o["us"] / 1e3,
        })
    lines = ["| op | dtype | ours at >= 64 MB: GB/s, fraction of the copy (min-max) | worst ratio to best peer "
             "at >= 1 MB (shape, peer) | median ratio | shapes >= 1 MB behind the best peer (by more than "
             f"{margin:.0%}) | launch-bound "
             "(< 1 MB): worst gap to best peer |",
             "|---|---|---|---|---|---|---|"]
    for (op, dtype), cs in sorted(per_op.items()):
        large = [c for c in cs if c["bytes"] >= 64e6]
        frac = (f"{max(c['gbps'] for c in large):.0f} GB/s, {min(c['frac'] for c in large):.2f}-"
                f"{max(c['frac'] for c in large):.2f}") if large else "-"
        mid = [c for c in cs if c["bytes"] >= 1e6] or cs
        worst = max(mid, key=lambda c: c["ratio"])
        slower = sum(c["ratio"] > 1.0 for c in mid)
        clearly_slower = sum(c["ratio"] > 1.0 + margin for c in mid)
        small = [c for c in cs if c["bytes"] < 1e6]
        gap = max((c["us"] - c["best_us"] for c in small), default=float("nan"))
        lines.append(f"| {op} | {dtype} | {frac} | {worst['ratio']:.2f} ({worst['tokens']}x{worst['hidden']}, "
                     f"{worst['best']}) | {statistics.median(c['ratio'] for c in mid):.2f} | {slower} of {len(mid)} "
                     f"({clearly_slower}) | "
                     f"{gap:+.1f} us |")
    return "\n".join(lines)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("csv", type=Path)
    p.add_argument("--png-dir", type=Path)
    p.add_argument("--ours", default="ours")
    p.add_argument("--table", action="store_true")
    p.add_argument("--margin", type=float, default=0.02,
                   help="also count the shapes behind the best peer by more than this fraction (default 0.02)")
    p.add_argument("--twin", help="a second build of our code in the same run (e.g. alt): ours is the better "
                   "of the two")
    p.add_argument("--label", action="append", default=[], help="IMPL=LEGEND, e.g. alt='ours (twin build)'")
    p.add_argument("--peers-from", type=Path, action="append", default=[],
                   help="another run's CSV: peers at their best over the runs")
    args = p.parse_args()
    rows = with_best_peers(load(args.csv), [load(o) for o in args.peers_from])
    if args.png_dir:
        args.png_dir.mkdir(parents=True, exist_ok=True)
        labels = dict(spec.split("=", 1) for spec in args.label)
        for path in plot(rows, args.png_dir, args.ours, labels):
            print(f"wrote {path}")
    if args.table:
        print(table(rows, args.ours, args.twin, args.margin))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
