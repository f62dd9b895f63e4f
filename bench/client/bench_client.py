#!/usr/bin/env python3
"""Client benchmark on loopback: not a test.

    .venv/bin/python bench/client/bench_client.py [--mb 200] [--files 8] [--runs 3]

Starts `kernelhub serve`, publishes a kernel whose variant holds --mb megabytes in --files LFS
files (+ 3 small regular files), then measures:
  1. cold download of the variant: `kernelhub download` vs `curl --parallel` fetching the same
     URLs (following the storage redirect) into a fresh folder, best of --runs;
  2. the warm pinned call (`--revision <commit>`): seconds inside the process and requests;
  3. requests per call from the server's request log: ours unpinned, ours pinned (cold), the
     `kernels` package's install_kernel and huggingface_hub's snapshot_download.
Prints a Markdown summary. KERNELHUB_BUILD_DIR (default ./build) locates bin/kernelhub.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import hub_server  # noqa: E402  (bench/hub_server.py)

HERE = Path(__file__).resolve().parent
BUILD = Path(os.environ.get("KERNELHUB_BUILD_DIR", HERE.parent.parent / "build"))
BIN = BUILD / "bin" / "kernelhub"
REPO = "acme/bench-kernel"
TOKEN = "hf_bench_write"


def start_server(work: Path):
    return hub_server.start_server(BIN, work, token=TOKEN, user="bench")


def log_lines(work: Path) -> int:
    return len((work / "server.log").read_text(errors="replace").splitlines())


def variant_name() -> str:
    try:
        import torch
        major, minor = torch.__version__.split(".")[:2]
        return f"torch{major}{minor}-cxx11-cpu-x86_64-linux"
    except Exception:
        return "torch-cpu"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=200)
    ap.add_argument("--files", type=int, default=8)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="kh-client-bench."))
    proc, url = start_server(work)
    try:
        run(args, work, url)
    finally:
        proc.terminate()
        proc.wait()
        shutil.rmtree(work, ignore_errors=True)


def run(args, work: Path, url: str) -> None:
    os.environ["HF_HUB_DISABLE_XET"] = "1"
    from huggingface_hub import HfApi

    from huggingface_hub import constants

    # huggingface_hub before kernel repos (e.g. 1.x on the GPU machine) cannot publish one: then
    # hub-publish does, with a pure-Python variant name (no op library needed for a download test).
    with_hub_publish = "kernel" not in constants.REPO_TYPES
    variant = "torch-cpu" if with_hub_publish else variant_name()
    src = work / "src" / "build" / variant
    src.mkdir(parents=True)
    (src / "__init__.py").write_text("from ._ops import ops\n")
    (src / "_ops.py").write_text("ops = None\n")
    (src / "metadata.json").write_text(json.dumps({"name": "bench-kernel", "id": "_bench_kernel", "version": 1,
                                                   "license": "Apache-2.0", "python-depends": [],
                                                   "backend": {"type": "cpu"}}))
    per_file = args.mb * 1_000_000 // args.files
    for i in range(args.files):
        (src / f"_bench_{i}.bin").write_bytes(os.urandom(per_file))
    if with_hub_publish:
        r = subprocess.run([str(BUILD / "bin" / "hub-publish"), REPO, "--build-dir", str(work / "src" / "build"),
                            "--version", "1", "--create", "--endpoint", url, "--json"],
                           env=dict(os.environ, HF_TOKEN=TOKEN), capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit("hub-publish failed: " + r.stderr + r.stdout)
        commit = json.loads(r.stdout)["commit"]
    else:
        api = HfApi(endpoint=url, token=TOKEN)
        api.create_repo(REPO, repo_type="kernel", exist_ok=True)
        api.create_branch(REPO, branch="v1", repo_type="kernel", exist_ok=True)
        api.upload_folder(folder_path=str(work / "src"), repo_id=REPO, repo_type="kernel", revision="v1",
                          commit_message="bench")
        commit = api.list_repo_refs(REPO, repo_type="kernel")
        commit = next(b.target_commit for b in commit.branches if b.name == "v1")
    files = sorted(p.relative_to(work / "src").as_posix() for p in src.iterdir())
    total = sum((work / "src" / f).stat().st_size for f in files)
    shutil.rmtree(work / "src")

    env = dict(os.environ, HF_ENDPOINT=url, HF_TOKEN=TOKEN, HF_HUB_DISABLE_XET="1")

    def cache_env(cache: Path) -> dict:
        return dict(env, HF_HUB_CACHE=str(cache), KERNELS_CACHE=str(cache), HF_HOME=str(cache.parent / "hf-home"))

    # 1. curl alone
    curl_s = []
    for _ in range(args.runs):
        out = work / "curl-out"
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir()
        cmd = ["curl", "-sS", "--no-progress-meter", "-L", "--fail", "--parallel", "--parallel-max", "8", "-H", f"Authorization: Bearer {TOKEN}"]
        for i, f in enumerate(files):
            cmd += ["-o", str(out / str(i)), f"{url}/kernels/{REPO}/resolve/{commit}/{f}"]
        t = time.perf_counter()
        subprocess.run(cmd, check=True)
        curl_s.append(time.perf_counter() - t)
        shutil.rmtree(out)

    # 2. ours, cold, unpinned (process wall time and the in-process figure)
    ours_wall, ours_inner, ours_requests = [], [], []
    for _ in range(args.runs):
        cache = work / "cache-ours"
        shutil.rmtree(cache, ignore_errors=True)
        before = log_lines(work)
        t = time.perf_counter()
        r = subprocess.run([str(BIN), "download", REPO, "--version", "1", "--variant", variant, "--json"],
                           env=cache_env(cache), capture_output=True, text=True, check=True)
        ours_wall.append(time.perf_counter() - t)
        ours_inner.append(json.loads(r.stdout)["seconds"])
        ours_requests.append(log_lines(work) - before)

    # 3. warm pinned
    warm = []
    before = log_lines(work)
    for _ in range(20):
        r = subprocess.run([str(BIN), "download", REPO, "--revision", commit, "--variant", variant, "--json"],
                           env=cache_env(cache), capture_output=True, text=True, check=True)
        out = json.loads(r.stdout)
        assert out["requests"] == 0
        warm.append(out["seconds"])
    warm_requests = log_lines(work) - before

    # 4. ours, cold, pinned
    cache = work / "cache-pinned"
    before = log_lines(work)
    subprocess.run([str(BIN), "download", REPO, "--revision", commit, "--variant", variant, "--json"],
                   env=cache_env(cache), capture_output=True, text=True, check=True)
    pinned_requests = log_lines(work) - before
    shutil.rmtree(cache)

    # 5. huggingface_hub snapshot_download and the kernels package, cold
    def python(code: str, cache: Path):
        before = log_lines(work)
        t = time.perf_counter()
        r = subprocess.run([sys.executable, "-c", code], env=cache_env(cache), capture_output=True, text=True)
        return time.perf_counter() - t, log_lines(work) - before, r.returncode, r.stderr[-500:]

    hf = python(f"from huggingface_hub import snapshot_download; snapshot_download({REPO!r}, repo_type='kernel', "
                f"revision='v1', allow_patterns=['build/{variant}/*'])", work / "cache-hf")
    shutil.rmtree(work / "cache-hf", ignore_errors=True)
    kn = python(f"import kernels; kernels.install_kernel({REPO!r}, version=1, backend='cpu', trust_remote_code=True)",
                work / "cache-kernels")
    shutil.rmtree(work / "cache-kernels", ignore_errors=True)

    mb = total / 1e6
    best_curl, best_ours = min(curl_s), min(ours_wall)
    print(f"## Client benchmark ({mb:.0f} MB variant `{variant}`, {len(files)} files, loopback, best of {args.runs})\n")
    print("| measurement | value |\n|---|---|")
    print(f"| curl --parallel (8), same URLs | {best_curl:.3f} s ({mb / best_curl:.0f} MB/s) |")
    print(f"| kernelhub download, cold (process wall) | {best_ours:.3f} s ({mb / best_ours:.0f} MB/s), "
          f"{100 * best_curl / best_ours:.0f}% of curl |")
    print(f"| kernelhub download, cold (in-process) | {min(ours_inner):.3f} s |")
    print(f"| huggingface_hub snapshot_download, cold | {hf[0]:.3f} s (rc {hf[2]}) |")
    print(f"| kernels install_kernel, cold | {kn[0]:.3f} s (rc {kn[2]}) |")
    print(f"| warm pinned call, in-process (median of 20) | {statistics.median(warm) * 1e3:.3f} ms, "
          f"max {max(warm) * 1e3:.3f} ms, {warm_requests} requests |")
    print("\n| requests per call (server log) | count |\n|---|---|")
    print(f"| ours, unpinned (`--version 1`), cold | {ours_requests[0]} |")
    print(f"| ours, pinned commit, cold | {pinned_requests} |")
    print(f"| ours, pinned commit, warm | {warm_requests // 20} |")
    print(f"| huggingface_hub snapshot_download, cold | {hf[1]} |")
    print(f"| kernels install_kernel, cold | {kn[1]} |")
    if kn[2] != 0:
        print(f"\nkernels install_kernel failed: {kn[3]}")


if __name__ == "__main__":
    main()
