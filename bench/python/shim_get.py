#!/usr/bin/env python
"""What a program start pays for a cached kernel: the shim's warm first get_kernel, and import +
first get_kernel, against the kernels package, on the same served repo and cache.

    PYTHONPATH=build/python .venv/bin/python bench/python/shim_get.py [--build build] [--repeat 9] \\
        [--cuda] [--variant cpu|cuda] [--out FILE.md]

Starts `kernelhub serve` on loopback, publishes the build's reference kernel variants as
acme/reference-kernels v1, fills a cache with one get_kernel per package, then times, in fresh
interpreters that have imported torch (and, with --cuda, initialised CUDA, as a program that runs
kernels has), median of --repeat processes each:
  warm first get   get_kernel(repo, version=1) and get_kernel(repo, revision=<commit>), the first call
                   of the process, the package already imported
  import + get     `import <package>` then that first get_kernel(version=1)
each as the median and the best of the processes (the best is what a busy machine disturbs least).
and, for kernelhub, what the warm first get imports (`python -X importtime`: the modules a get
loads, with their cumulative time), and for both which of tvm_ffi, huggingface_hub and tqdm the
package's import and get imported (torch.hub imports tqdm itself where it is installed).
Prints a Markdown report (and writes it to --out); bench/python/SHIM_GET.md has recorded runs.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# One timed import and get in a fresh interpreter. argv: package, repo, kwargs (JSON), cuda (0/1).
CHILD = r"""
import json, sys, time
package, repo, kwargs, cuda = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), sys.argv[4] == "1"
import torch
if cuda:
    torch.zeros(1, device="cuda")
    torch.cuda.synchronize()
before = set(sys.modules)
start = time.perf_counter()
pkg = __import__(package)
imported = time.perf_counter()
fetched = []
if package == "kernelhub":  # when the core's fetch returned and the variant's import began
    from kernelhub import _load
    import_variant = _load._import
    _load._import = lambda *a: (fetched.append(time.perf_counter()), import_variant(*a))[1]
print("--- get_kernel", file=sys.stderr, flush=True)
module = pkg.get_kernel(repo, **kwargs)
done = time.perf_counter()
print(json.dumps({"import_s": imported - start, "get_s": done - imported, "module": module.__name__,
                  "fetch_s": fetched[0] - imported if fetched else None,
                  "loaded": sorted(m for m in ("tvm_ffi", "huggingface_hub", "tqdm") if m in set(sys.modules) - before)}))
"""


def start_server(folder: Path, kernelhub: Path) -> tuple[subprocess.Popen, str, str]:
    """`kernelhub serve` on loopback, acme a trusted publisher; (process, URL, write token)."""
    token = "hf_bench_write"
    tokens = folder / "tokens.json"
    tokens.write_text(json.dumps({"tokens": {token: {"user": "bench", "orgs": ["acme"], "write": True}},
                                  "organizations": {"acme": {"trustedKernelPublisher": True}}}))
    server = subprocess.Popen([str(kernelhub), "serve", "--root", str(folder / "hub"), "--tokens", str(tokens),
                               "--json"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return server, json.loads(server.stdout.readline())["url"], token


def client_env(url: str, token: str, cache: Path, package_dir: Path) -> dict:
    env = dict(os.environ, HF_ENDPOINT=url, HF_TOKEN=token, HF_HUB_CACHE=str(cache), KERNELS_CACHE=str(cache),
               HF_HUB_DISABLE_XET="1")
    for name in ("HF_HUB_OFFLINE", "LOCAL_KERNELS", "HF_HUB_DISABLE_TELEMETRY"):
        env.pop(name, None)
    env["PYTHONPATH"] = os.pathsep.join([str(package_dir), *filter(None, [os.environ.get("PYTHONPATH")])])
    return env


def run_child(env: dict, *args: str, importtime: bool = False) -> tuple[dict, str]:
    command = [sys.executable, *(["-X", "importtime"] if importtime else []), "-c", CHILD, *args]
    out = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-4000:])
    return json.loads(out.stdout.strip().splitlines()[-1]), out.stderr


def imports_during_get(stderr: str) -> list[tuple[float, str]]:
    """(cumulative ms, module) of each top-level import after the marker the child prints."""
    after = stderr.split("--- get_kernel", 1)[-1]
    found = []
    for line in after.splitlines():
        fields = line[len("import time:"):].split("|", 2) if line.startswith("import time:") else []
        # A top-level import's name follows one space; a nested one's is indented further.
        if len(fields) == 3 and fields[1].strip().isdigit() and fields[2][:1] == " " and fields[2][1:2] != " ":
            found.append((int(fields[1]) / 1000.0, fields[2].strip()))
    return sorted(found, reverse=True)


def summary_ms(values: list[float]) -> tuple[float, float]:
    """(median, best) in ms: the best of N is what a busy machine leaves least disturbed."""
    return statistics.median(values) * 1000.0, min(values) * 1000.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=str(ROOT / "build"))
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--cuda", action="store_true", help="initialise CUDA in each process before the get")
    parser.add_argument("--variant", choices=("cpu", "cuda"), default="cpu", help="the backend to get")
    parser.add_argument("--out", help="also write the report here")
    args = parser.parse_args()
    build = Path(args.build).resolve()
    os.environ["HF_HUB_DISABLE_XET"] = "1"  # read at import: kernelhub serve speaks git-LFS, not Xet
    from huggingface_hub import CommitOperationAdd, HfApi  # noqa: E402

    import torch  # noqa: E402

    lines = []
    say = lambda text="": (print(text), lines.append(text))  # noqa: E731
    gpu = torch.cuda.get_device_name(0) if args.cuda else "none used"
    installed = {name: importlib.util.find_spec(name) is not None for name in ("tvm_ffi", "huggingface_hub", "tqdm")}
    say(f"machine: {platform.node() or '?'}, {os.cpu_count()} CPUs, GPU {gpu}; Python {platform.python_version()}, "
        f"torch {torch.__version__}; installed: " + ", ".join(f"{k} {'yes' if v else 'no'}" for k, v in installed.items()))

    with tempfile.TemporaryDirectory() as tmp:
        server, url, token = start_server(Path(tmp), build / "bin" / "kernelhub")
        try:
            api = HfApi(endpoint=url, token=token)
            repo = "acme/reference-kernels"
            api.create_repo(repo, repo_type="kernel", exist_ok=True)
            api.create_branch(repo, repo_type="kernel", branch="v1", exist_ok=True)
            ops = []
            for variant in sorted((build / "kernels" / "build").iterdir()):
                if not variant.is_dir():
                    continue
                for f in sorted(variant.rglob("*")):
                    if f.is_file() and "__pycache__" not in f.parts:
                        ops.append(CommitOperationAdd(path_in_repo=f"build/{variant.name}/{f.relative_to(variant)}",
                                                      path_or_fileobj=str(f)))
            commit = api.create_commit(repo, repo_type="kernel", revision="v1", operations=ops,
                                       commit_message="bench").oid
            cuda = "1" if args.cuda else "0"
            rows = {}
            for package in ("kernelhub", "kernels"):
                env = client_env(url, token, Path(tmp) / f"cache-{package}", build / "python")
                by_version = json.dumps({"version": 1, "backend": args.variant})
                by_commit = json.dumps({"revision": commit, "backend": args.variant})
                first, _ = run_child(env, package, repo, by_version, cuda)  # fills the cache
                time.sleep(2.2)  # files changed in the last 2 s get no verification stamp (racily clean)
                run_child(env, package, repo, by_version, cuda)  # kernelhub's stamp
                warm_version, warm_commit, import_get, loaded, fetch = [], [], [], set(), []
                for _ in range(args.repeat):
                    result, _ = run_child(env, package, repo, by_version, cuda)
                    warm_version.append(result["get_s"])
                    if result["fetch_s"] is not None:
                        fetch.append(result["fetch_s"])
                    import_get.append(result["import_s"] + result["get_s"])
                    loaded.update(result["loaded"])
                    result, _ = run_child(env, package, repo, by_commit, cuda)
                    warm_commit.append(result["get_s"])
                _, stderr = run_child(env, package, repo, by_version, cuda, importtime=True)
                rows[package] = {"module": first["module"], "warm_version": summary_ms(warm_version),
                                 "warm_commit": summary_ms(warm_commit), "import_get": summary_ms(import_get),
                                 "loaded": sorted(loaded), "imports": imports_during_get(stderr),
                                 "fetch": summary_ms(fetch) if fetch else None}
        finally:
            server.terminate()
            server.wait(timeout=10)

    ours, theirs = rows["kernelhub"], rows["kernels"]
    say()
    say(f"Variant: `{ours['module']}` ({args.variant}); medians of {args.repeat} processes, each after `import torch`"
        + (" and CUDA initialised" if args.cuda else "") + ".")
    say()
    say("| measure: median (best) | kernelhub | kernels 0.19.1 | ratio of medians (bests) |")
    say("|---|---|---|---|")
    for key, label in (("warm_version", "warm first get_kernel(version=1)"),
                       ("warm_commit", "warm first get_kernel(revision=commit)"),
                       ("import_get", "import + first get_kernel(version=1)")):
        (a, a_best), (b, b_best) = ours[key], theirs[key]
        say(f"| {label} | {a:.1f} ms ({a_best:.1f}) | {b:.1f} ms ({b_best:.1f}) | {b / a:.1f}x ({b_best / a_best:.1f}x) |")
    fetch, fetch_best = ours["fetch"]
    say(f"| kernelhub's get(version=1): the core's fetch (resolve, check, no download) | {fetch:.1f} ms "
        f"({fetch_best:.1f}) | | |")
    say(f"| kernelhub's get(version=1): the rest (importing the variant's module) | "
        f"{ours['warm_version'][0] - fetch:.1f} ms | | |")
    say(f"| of tvm_ffi, huggingface_hub, tqdm: imported by the package's import and get | {', '.join(ours['loaded']) or 'none'} | "
        f"{', '.join(theirs['loaded']) or 'none'} | |")
    say()
    say("kernelhub's warm first get imports (`python -X importtime`, cumulative ms):")
    for ms, name in ours["imports"][:8] or [(0.0, "nothing")]:
        say(f"- {name}: {ms:.1f} ms")
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
