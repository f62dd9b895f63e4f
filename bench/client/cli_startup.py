#!/usr/bin/env python3
"""Process wall time of the `kernelhub` CLI before and after it stopped linking LibTorch: not a
test.

    .venv/bin/python bench/client/cli_startup.py --before OLD/bin/kernelhub [--after build/bin/kernelhub] [--runs 20]

Times, as whole processes (fork to exit), the median and spread of --runs runs of each command,
the two binaries alternating run by run:
  kernelhub --help
  kernelhub variants <build>/kernels/build --json      the local reference kernels' decision trace
  kernelhub download acme/reference-kernels --version 1 --json
                                                        already cached: one revision request to a
                                                        `kernelhub serve` on loopback, no file
  kernelhub env
  kernelhub get acme/reference-kernels --json           LOCAL_KERNELS: the load that still needs
                                                        LibTorch (after: through kernelhub-get)
Both run with VIRTUAL_ENV set to this Python's environment (the torch the new CLI reads from its
files; the old one asks the LibTorch it links). Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import glob
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import hub_server  # noqa: E402  (bench/hub_server.py)

ROOT = Path(__file__).resolve().parents[2]
REPO = "acme/reference-kernels"
TOKEN = "hf_bench_write"


def publish(url: str, variant: Path) -> None:
    os.environ["HF_HUB_DISABLE_XET"] = "1"
    from huggingface_hub import HfApi, constants
    constants.HF_HUB_DISABLE_XET = True
    api = HfApi(endpoint=url, token=TOKEN)
    api.create_repo(REPO, repo_type="kernel", exist_ok=True)
    api.create_branch(REPO, repo_type="kernel", branch="v1", exist_ok=True)
    api.upload_folder(folder_path=str(variant), path_in_repo=f"build/{variant.name}", repo_id=REPO, repo_type="kernel",
                      revision="v1", ignore_patterns=["__pycache__/*"])


def wall(argv: list[str], env: dict) -> float:
    start = time.perf_counter()
    result = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({result.returncode}): {result.stderr[-2000:]}")
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", type=Path, required=True, help="the kernelhub that links LibTorch")
    parser.add_argument("--after", type=Path, default=ROOT / "build" / "bin" / "kernelhub")
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    build = args.after.resolve().parent.parent
    variants = sorted(glob.glob(str(build / "kernels" / "build" / "torch*-cpu-*")))
    if not variants:
        raise SystemExit(f"no CPU variant in {build}/kernels/build: build the reference kernels")

    work = Path(tempfile.mkdtemp(prefix="kernelhub-cli-startup-"))
    server, url = hub_server.start_server(args.after, work, token=TOKEN, user="bench")
    try:
        publish(url, Path(variants[0]))
        env = dict(os.environ, VIRTUAL_ENV=sys.prefix, HF_ENDPOINT=url, HF_HUB_CACHE=str(work / "cache"),
                   HF_HOME=str(work / "hf-home"), HF_HUB_DISABLE_XET="1", KERNELHUB_BACKEND="cpu",
                   LOCAL_KERNELS=f"{REPO}={build / 'kernels'}", KERNELHUB_STATE_DIR=str(work / "state"))
        env.pop("KERNELHUB_TORCH", None)
        commands = {
            "kernelhub --help": ["--help"],
            "kernelhub variants DIR --json": ["variants", str(build / "kernels" / "build"), "--json"],
            "kernelhub download (cached) --json": ["download", REPO, "--version", "1", "--json"],
            "kernelhub env": ["env"],
            "kernelhub get (local) --json": ["get", REPO, "--json"],
        }
        for binary in (args.before, args.after):  # warm: the cache, the page cache, the probe
            for argv in commands.values():
                wall([str(binary), *argv], env)
        load = os.getloadavg()[0]
        print(f"{args.runs} runs each, alternating; process wall time, median (min-max), ms; {os.cpu_count()} cores, "
              f"load average {load:.1f} at the start\n")
        print("| command | before (links LibTorch) | after (torch-free) | speed-up |")
        print("|---|---|---|---|")
        for name, argv in commands.items():
            times: dict[Path, list[float]] = {args.before: [], args.after: []}
            for _ in range(args.runs):
                for binary in times:
                    times[binary].append(wall([str(binary), *argv], env) * 1e3)
            before, after = (statistics.median(times[b]) for b in (args.before, args.after))
            spread = {b: f"{min(t):.1f}-{max(t):.1f}" for b, t in times.items()}
            print(f"| `{name}` | {before:.1f} ({spread[args.before]}) | {after:.1f} ({spread[args.after]}) | "
                  f"{before / after:.1f}x |")
    finally:
        server.terminate()
        server.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
