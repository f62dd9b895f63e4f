#!/usr/bin/env python
"""What checking a variant's Sigstore bundle adds to get_kernel: the same variant published unsigned and
signed (a bundle of the tests' own Sigstore under kernels-community's identity, its root named by
KERNELHUB_SIGSTORE_TRUSTED_ROOT), loaded by C++ get_kernel (bench/client/get_kernel_bench). Not a test.

    .venv/bin/python bench/client/bench_signed_load.py [--build build] [--repeat 200] [--processes 9]

Each variant, in fresh processes against `kernelhub serve` on loopback, backend="cpu":
  cold       version=1 into an empty cache and an empty state directory: the bundle is verified
             (chain, SCT, log entry, checkpoint, signature) and the verification recorded
  warm       the first call of a new process, cache and state warm: the record is read and the
             policy checked against its certificate (median of --processes processes)
  repeated   further calls in that process: the record is in memory (median of --repeat calls)
Prints Markdown: per variant and the difference signed - unsigned.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "client"))
sys.path.insert(0, str(ROOT / "tests" / "python"))
from bench_get_kernel import bench_tools, cpp_calls  # noqa: E402


def copy_variant(source: Path, into: Path) -> Path:
    import shutil

    target = into / source.name
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__", "*.sigstore"))
    return target


def measure(bench: Path, env: dict, server, repo: str, processes: int, repeat: int) -> dict:
    cold, _ = cpp_calls_for(bench, env, server, repo, 1)
    time.sleep(2.2)  # past the racy window: the stamps and records hold for the next processes
    cpp_calls_for(bench, env, server, repo, 1)
    firsts = [cpp_calls_for(bench, env, server, repo, 1)[0][0]["wall_ms"] for _ in range(processes)]
    calls, _ = cpp_calls_for(bench, env, server, repo, repeat + 1)
    return {"cold_ms": cold[0]["wall_ms"], "warm_ms": statistics.median(firsts),
            "repeated_ms": statistics.median(c["wall_ms"] for c in calls[1:])}


def cpp_calls_for(bench: Path, env: dict, server, repo: str, calls: int):
    import bench_get_kernel

    saved = bench_get_kernel.REPO
    bench_get_kernel.REPO = repo
    try:
        return cpp_calls(bench, env, server, ["--version", "1"], calls)
    finally:
        bench_get_kernel.REPO = saved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=str(ROOT / "build"))
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--processes", type=int, default=9)
    args = parser.parse_args()
    bench, start_server, child_env, publish = bench_tools(Path(args.build).resolve())
    from shim_support import cpu_variant_dir
    from sigstore_testing import KERNELS_COMMUNITY, LocalSigstore, sign_variant

    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        server = start_server(tmp / "server", [])
        try:
            sigstore = LocalSigstore(tmp / "sigstore")
            unsigned = copy_variant(cpu_variant_dir(), tmp / "unsigned")
            signed = copy_variant(cpu_variant_dir(), tmp / "signed")
            sign_variant(signed, KERNELS_COMMUNITY, sigstore)
            publish(server, "acme/unsigned", variant=unsigned)
            publish(server, "acme/signed", variant=signed)
            for name in ("unsigned", "signed"):
                env = child_env(server, tmp / f"cache-{name}", KERNELHUB_SIGSTORE_TRUSTED_ROOT=str(sigstore.trusted_root_path),
                                KERNELHUB_STATE_DIR=str(tmp / f"state-{name}"))
                env.pop("LD_LIBRARY_PATH", None)
                results[name] = measure(bench, env, server, f"acme/{name}", args.processes, args.repeat)
        finally:
            server.stop()
    print("| C++ get_kernel, reference kernels' CPU variant | cold: ms | warm, new process: ms (median) "
          "| repeated in-process: ms (median) |")
    print("|---|---|---|---|")
    for name, r in results.items():
        print(f"| {name} | {r['cold_ms']:.2f} | {r['warm_ms']:.2f} | {r['repeated_ms']:.3f} |")
    u, s = results["unsigned"], results["signed"]
    print(f"| signed - unsigned | {s['cold_ms'] - u['cold_ms']:+.2f} | {s['warm_ms'] - u['warm_ms']:+.2f} "
          f"| {s['repeated_ms'] - u['repeated_ms']:+.3f} |")


if __name__ == "__main__":
    main()
