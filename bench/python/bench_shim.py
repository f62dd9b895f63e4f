#!/usr/bin/env python
"""kernelhub (Python shim) vs the kernels package: import time, cold and warm get_kernel.

    PYTHONPATH=build/python .venv/bin/python bench/python/bench_shim.py [--build build] [--repeat 5]

Starts `kernelhub serve` (request log on) on loopback, publishes the reference kernel's CPU
variant as acme/reference-kernels v1, then for each package, in fresh interpreters:
  import   `import kernelhub` / `import kernels` (median of --repeat processes; `python -c pass`
           subtracted)
  cold     get_kernel(repo, version=1) into an empty cache: seconds and requests to the server
  warm     get_kernel(repo, revision=<commit>) with that cache, first call in a new process
           (what a program start pays), and the median of 20 further calls in the same process;
           requests made
Both packages are asked for backend="cpu" (see tests/python/test_shim_differential.py). Prints a
Markdown table; bench/python/RESULTS.md has a recorded run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CHILD = r"""
import json, sys, time
package, repo, kwargs, log, repeat = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), sys.argv[4], int(sys.argv[5])
start = time.perf_counter()
pkg = __import__(package)
import_s = time.perf_counter() - start
import torch  # both need it to import a kernel; not part of what is measured below
requests = lambda: sum(1 for line in open(log) if line.strip())
before = requests()
start = time.perf_counter()
module = pkg.get_kernel(repo, **kwargs)
first_s = time.perf_counter() - start
first_requests = requests() - before
again = []
before = requests()
for _ in range(repeat):
    start = time.perf_counter()
    pkg.get_kernel(repo, **kwargs)
    again.append(time.perf_counter() - start)
print(json.dumps({"import_s": import_s, "first_s": first_s, "first_requests": first_requests,
                  "again_s": sorted(again)[len(again) // 2] if again else 0.0, "again_requests": requests() - before,
                  "module": module.__name__}))
"""


def run_child(env: dict, *args: str) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, *args], capture_output=True, text=True, env=env, timeout=600)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-4000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def import_seconds(env: dict, statement: str, repeat: int) -> float:
    import time

    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", statement], check=True, env=env)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=str(ROOT / "build"))
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    os.environ["KERNELHUB_BUILD_DIR"] = str(Path(args.build).resolve())
    sys.path.insert(0, str(ROOT / "tests" / "python"))
    import conftest  # noqa: E402  (the kernelhub serve launcher the tests use)
    from shim_support import child_env, publish  # noqa: E402

    with tempfile.TemporaryDirectory() as tmp:
        server = conftest._start_server(Path(tmp) / "server", [])
        try:
            commit = publish(server, "acme/reference-kernels")
            rows = {}
            for package in ("kernelhub", "kernels"):
                cache = Path(tmp) / f"cache-{package}"
                env = child_env(server, cache)
                base = import_seconds(env, "pass", args.repeat)
                imported = import_seconds(env, f"import {package}", args.repeat) - base
                cold = run_child(env, package, "acme/reference-kernels", json.dumps({"version": 1, "backend": "cpu"}),
                                 str(server.log_path), "0")
                warm = run_child(env, package, "acme/reference-kernels",
                                 json.dumps({"revision": commit, "backend": "cpu"}), str(server.log_path), "20")
                rows[package] = (imported, cold, warm)
        finally:
            server.stop()

    ours, theirs = rows["kernelhub"], rows["kernels"]
    print("| measure | kernelhub | kernels | ratio |")
    print("|---|---|---|---|")

    def row(name, a, b, unit="ms", scale=1000.0):
        ratio = f"{b / a:.1f}x" if a > 0 else "-"
        print(f"| {name} | {a * scale:.1f} {unit} | {b * scale:.1f} {unit} | {ratio} |")

    row("`import` (process, minus `python -c pass`)", ours[0], theirs[0])
    row("cold get_kernel(version=1), empty cache", ours[1]["first_s"], theirs[1]["first_s"])
    print(f"| cold: requests to the server | {ours[1]['first_requests']} | {theirs[1]['first_requests']} | |")
    row("warm get_kernel(revision=commit), first call in a new process", ours[2]["first_s"], theirs[2]["first_s"])
    print(f"| warm first call: requests | {ours[2]['first_requests']} | {theirs[2]['first_requests']} | |")
    row("warm get_kernel, repeated in-process (median of 20)", ours[2]["again_s"], theirs[2]["again_s"], "µs",
        1e6)
    print(f"| repeated: requests (20 calls) | {ours[2]['again_requests']} | {theirs[2]['again_requests']} | |")


if __name__ == "__main__":
    main()
