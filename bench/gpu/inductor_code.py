#!/usr/bin/env python3
"""What inductor runs at one shape: its Triton source, PTX and cubins, and the config it picked.

    python3 bench/gpu/inductor_code.py --out DIR rms_norm:65536x128 [ltx_rope:16x8192 ...]

Each shape compiles bench_ops.py's eager function with static shapes (as --compile-per-shape does)
in a process of its own, with fresh inductor and Triton caches under DIR/OP-TxH/, then calls it once.
Those caches then hold the generated module (the kernel, its launch grid and every candidate config),
the autotuner's `.best_config`, and each candidate's PTX and cubin, to read beside ours
(bench/gpu/NOTES.md, "128-wide rows").
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path


def one_shape(op: str, tokens: int, hidden: int) -> None:
    import torch

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_ops import EAGER, Case

    case = Case(op, tokens, hidden, torch.bfloat16)
    compiled = torch.compile(EAGER[op], dynamic=False)
    compiled(*case.eager_args())
    torch.cuda.synchronize()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--one", help=argparse.SUPPRESS)  # the child process: OP:TxH
    p.add_argument("shapes", nargs="*", help="OP:TOKENSxHIDDEN")
    args = p.parse_args()
    if args.one:
        op, t, h = re.fullmatch(r"(\w+):(\d+)x(\d+)", args.one).groups()
        one_shape(op, int(t), int(h))
        return 0
    failed = 0
    for shape in args.shapes:
        if not re.fullmatch(r"\w+:\d+x\d+", shape):
            p.error(f"OP:TOKENSxHIDDEN, got {shape}")
        where = args.out / shape.replace(":", "-")
        env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=str(where / "inductor"), TRITON_CACHE_DIR=str(where / "triton"))
        print(f"== {shape} -> {where}", flush=True)
        failed += subprocess.run([sys.executable, __file__, "--out", str(args.out), "--one", shape], env=env).returncode != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
