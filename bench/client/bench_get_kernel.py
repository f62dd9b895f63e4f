#!/usr/bin/env python
"""What one get_kernel costs: requests, bytes hashed and read, wall time; cold, warm and locked, in a
new process and repeated in-process; C++ and Python, beside the kernels package. Not a test.

    PYTHONPATH=build/python .venv/bin/python bench/client/bench_get_kernel.py [--build build] [--repeat 20]
        [--json out.json]

Starts `kernelhub serve` (request log on) on loopback, publishes the reference kernel's CPU variant
as acme/reference-kernels v1, locks it (`kernelhub lock`), then measures, each in fresh processes:
  C++ (bench/client/get_kernel_bench, kernelhub::get_kernel):
    cold        version=1 into an empty cache, one call
    warm        version=1 / revision=<commit> / lockfile, the first call of a new process, once
                the downloaded files are older than the 2 s racy window (one process verifies
                and stamps them before the warm runs)
    repeated    the same, the median of --repeat further calls in that process
  Python (get_kernel of the kernelhub shim and of kernels 0.17.2), version=1: first call in a new
  process with the cache warm, and the median of --repeat further calls.
Requests are counted in the server's log. Every load asks for backend="cpu". Prints Markdown.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REPO = "acme/reference-kernels"
sys.path.insert(0, str(ROOT / "bench" / "python"))
import bench_shim  # noqa: E402  (its child interpreter times a package's get_kernel)

def log_lines(server) -> int:
    return sum(1 for line in server.log().splitlines() if line.strip())


def cpp_calls(bench: Path, env: dict, server, args: list[str], calls: int) -> tuple[list[dict], int]:
    """Runs `calls` get_kernel calls in one new process: each call's numbers, and the requests the
    server saw (the revision request is made before the download counter starts)."""
    before = log_lines(server)
    out = subprocess.run([str(bench), REPO, *args, "--backend", "cpu", "--repeat", str(calls)], capture_output=True,
                         text=True, env=env, timeout=600)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-4000:])
    return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")], log_lines(server) - before


def cpp_run(bench: Path, env: dict, server, args: list[str], repeat: int) -> dict:
    (first,), first_requests = cpp_calls(bench, env, server, args, 1)
    first["requests"] = first_requests
    result = {"first": first}
    if repeat:
        calls, requests = cpp_calls(bench, env, server, args, repeat + 1)
        rest = calls[1:]
        result["again"] = {k: statistics.median(c[k] for c in rest) for k in ("wall_ms", "bytes_hashed", "bytes_read")}
        result["again"]["requests"] = (requests - first_requests) / repeat
    return result


def py_run(env: dict, server, package: str, kwargs: dict, repeat: int) -> dict:
    """The first and the repeated get_kernel of `package` in one new interpreter (bench_shim's child)."""
    got = bench_shim.run_child(env, package, REPO, json.dumps(kwargs), str(server.log_path), str(repeat))
    return {"first_ms": got["first_s"] * 1e3, "first_requests": got["first_requests"],
            "again_ms": got["again_s"] * 1e3, "again_requests": got["again_requests"] / max(repeat, 1)}


def bench_tools(build: Path):
    """get_kernel_bench of `build`, and the tests' helpers that start `kernelhub serve`, make a
    client's environment for it and publish the reference kernel's CPU variant to it."""
    os.environ["KERNELHUB_BUILD_DIR"] = str(build)
    sys.path.insert(0, str(ROOT / "tests" / "python"))
    import conftest  # noqa: E402  (the kernelhub serve launcher the tests use)
    from shim_support import child_env, publish  # noqa: E402

    return build / "bin" / "get_kernel_bench", conftest._start_server, child_env, publish


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=str(ROOT / "build"))
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--json", help="also write the raw numbers here")
    args = parser.parse_args()
    bench, start_server, child_env, publish = bench_tools(Path(args.build).resolve())
    results: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        server = start_server(tmp / "server", [])
        try:
            commit = publish(server, REPO)
            project = tmp / "project"
            project.mkdir()
            (project / "kernels.toml").write_text(f'[dependencies]\n"{REPO}" = 1\n')
            cache = tmp / "cache"
            env = child_env(server, cache)
            env.pop("LD_LIBRARY_PATH", None)
            subprocess.run([str(build / "bin" / "kernelhub"), "lock", str(project)], check=True, env=env,
                           capture_output=True)
            lockfile = str(project / "kernels.lock")
            results["cpp cold version=1"] = cpp_run(bench, env, server, ["--version", "1"], 0)
            # Files written less than 2 s before a verification are not stamped (racily clean):
            # measure the steady state, as a program started later sees it.
            time.sleep(2.2)
            cpp_run(bench, env, server, ["--version", "1"], 0)
            for name, flags in [("version=1", ["--version", "1"]), ("revision=commit", ["--revision", commit]),
                                ("lockfile", ["--lockfile", lockfile])]:
                results[f"cpp warm {name}"] = cpp_run(bench, env, server, flags, args.repeat)
            for package in ("kernelhub", "kernels"):
                py_env = child_env(server, tmp / f"cache-{package}")
                py_run(py_env, server, package, {"version": 1, "backend": "cpu"}, 0)  # fills the cache
                results[f"py {package} warm version=1"] = py_run(py_env, server, package,
                                                                 {"version": 1, "backend": "cpu"}, args.repeat)
        finally:
            server.stop()

    print("| get_kernel (reference kernels, CPU variant) | first call: ms | requests | bytes hashed | bytes read "
          "| repeated in-process: ms | requests a call | bytes hashed |")
    print("|---|---|---|---|---|---|---|---|")
    for name, r in results.items():
        if name.startswith("cpp"):
            f, a = r["first"], r.get("again")
            again = (f"{a['wall_ms']:.3f} | {a['requests']:.1f} | {a['bytes_hashed']:.0f}" if a else "- | - | -")
            print(f"| C++ {name[4:]} | {f['wall_ms']:.1f} | {f['requests']} | {f['bytes_hashed']} | {f['bytes_read']} "
                  f"| {again} |")
        else:
            print(f"| Python {name[3:]} | {r['first_ms']:.1f} | {r['first_requests']} | - | - | {r['again_ms']:.3f} "
                  f"| {r['again_requests']:.1f} | - |")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
