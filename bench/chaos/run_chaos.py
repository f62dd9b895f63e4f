"""Chaos run: N `kernelhub get` against `kernelhub serve` through fault_proxy.FaultProxy, then
checks that nothing was left broken.

    .venv/bin/python bench/chaos/run_chaos.py --runs 1000 [--jobs 2] [--seed 1] [--fault-rate 0.3]
        [--build-dir build] [--json out.json]

Each run uses a fresh cache (probability --fresh) or one of --shared caches used by every job, so
cold and warm loads, and concurrent writers of one cache, are all mixed. Checked:
  - every run ends in exit 0, or exit 1 with a one-line-or-more message on stderr (a typed error);
    never a signal, another exit code, a crash marker on stderr, or a hang (--timeout);
  - afterwards, every blob in every cache re-hashes to its name (sha256 for 64-hex names, the git
    blob sha1 for 40-hex names), no `.incomplete` file is left, no `.locks` file is still locked
    (flock LOCK_EX|LOCK_NB succeeds), and one more run per shared cache without faults succeeds.
Exit status 0 when every check holds.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import fcntl
import hashlib
import json
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

# `kernelhub serve` speaks the git-LFS upload path; huggingface_hub reads this once, at import.
os.environ.setdefault("HF_HUB_DISABLE_XET", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))
from fault_proxy import FAULTS, FaultProxy  # noqa: E402

REPO = "acme/reference-kernels"
WRITE_TOKEN = "hf_chaos_write"
CRASH_MARKERS = ("terminate called", "Segmentation fault", "AddressSanitizer", "runtime error:", "Traceback",
                 "Assertion", "core dumped", "Aborted")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(build: Path, work: Path, proxy: FaultProxy) -> subprocess.Popen:
    """`kernelhub serve` on a port of ours (with --public-url it prints the proxy's URL, not its own)."""
    tokens = work / "tokens.json"
    tokens.write_text(json.dumps({
        "tokens": {WRITE_TOKEN: {"user": "alice", "orgs": ["acme"], "write": True}},
        "organizations": {"acme": {"fullname": "Acme", "trustedKernelPublisher": True}},
    }))
    proxy.upstream_port = free_port()
    args = [str(build / "bin" / "kernelhub"), "serve", "--root", str(work / "hub-root"),
            "--port", str(proxy.upstream_port), "--tokens", str(tokens), "--public-url", proxy.hub_url,
            "--storage-url", proxy.storage_url]
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=open(work / "server.log", "wb"), text=True)
    line = process.stdout.readline()
    if "listening" not in line:
        process.kill()
        raise RuntimeError("kernelhub serve did not start: " + (work / "server.log").read_text(errors="replace"))
    return process


def publish(proxy: FaultProxy, variant: Path) -> str:
    from huggingface_hub import CommitOperationAdd, HfApi

    api = HfApi(endpoint=proxy.hub_url, token=WRITE_TOKEN)
    api.create_repo(REPO, repo_type="kernel", exist_ok=True)
    api.create_branch(REPO, repo_type="kernel", branch="v1", exist_ok=True)
    ops = [CommitOperationAdd(path_in_repo=f"build/{variant.name}/{f.relative_to(variant).as_posix()}",
                              path_or_fileobj=str(f))
           for f in sorted(variant.rglob("*")) if f.is_file() and "__pycache__" not in f.parts]
    return api.create_commit(REPO, repo_type="kernel", revision="v1", operations=ops, commit_message="publish").oid


def get(build: Path, proxy: FaultProxy, cache: Path, timeout: float) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "KERNELS_", "LOCAL_KERNELS"))}
    env.update(HF_ENDPOINT=proxy.hub_url, HF_HUB_CACHE=str(cache), HF_HUB_DISABLE_XET="1",
               HF_HUB_ETAG_TIMEOUT="2", HF_HUB_DOWNLOAD_TIMEOUT="2")
    start = time.monotonic()
    try:
        r = subprocess.run([str(build / "bin" / "kernelhub"), "get", REPO, "--version", "1"],
                           capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"outcome": "hang", "seconds": timeout, "message": f"no exit within {timeout} s"}
    seconds = time.monotonic() - start
    stderr = r.stderr.strip()
    if r.returncode == 0:
        outcome = "ok"
    elif r.returncode == 1 and stderr and not any(m in stderr for m in CRASH_MARKERS):
        outcome = "typed_error"
    else:
        outcome = "crash"
    return {"outcome": outcome, "rc": r.returncode, "seconds": seconds,
            "message": stderr.splitlines()[-1] if stderr else ""}


def git_blob_sha1(path: Path) -> str:
    h = hashlib.sha1(b"blob %d\0" % path.stat().st_size)
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def check_cache(cache: Path) -> list[str]:
    """Problems left in a cache at rest: bad blobs, .incomplete files, held locks."""
    problems = []
    if not cache.exists():
        return problems
    for path in cache.rglob("*"):
        if path.is_symlink() or not path.is_file():
            continue
        name = path.name
        if name.endswith(".incomplete"):
            problems.append(f"left behind: {path}")
        elif path.parent.name == "blobs":
            if re.fullmatch(r"[0-9a-f]{64}", name):
                if sha256(path) != name:
                    problems.append(f"blob {path} does not hash to its sha256 name")
            elif re.fullmatch(r"[0-9a-f]{40}", name):
                if git_blob_sha1(path) != name:
                    problems.append(f"blob {path} does not hash to its git blob sha1 name")
            else:
                problems.append(f"unexpected file in blobs/: {path}")
        elif ".locks" in path.parts:
            with open(path, "rb") as f:
                try:
                    fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    fcntl.flock(f, fcntl.LOCK_UN)
                except OSError:
                    problems.append(f"lock still held: {path}")
    return problems


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--fault-rate", type=float, default=0.3, help="share of requests that get a fault")
    parser.add_argument("--fresh", type=float, default=0.3, help="share of runs in a fresh (cold) cache")
    parser.add_argument("--shared", type=int, default=3, help="caches shared by all jobs")
    parser.add_argument("--stall", type=float, default=3.0, help="seconds a stall holds a response")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds before a run counts as a hang")
    parser.add_argument("--build-dir", type=Path, default=Path(os.environ.get("KERNELHUB_BUILD_DIR", "build")),
                        help="holds bin/kernelhub, bin/kernelhub-get (which `kernelhub get` runs) and "
                             "kernels/build/torch*-cpu-*; copy them elsewhere for a "
                             "long run while the build tree may be rebuilt")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args(argv)

    build = args.build_dir.resolve()
    variants = sorted((build / "kernels" / "build").glob("torch*-cpu-*"))
    if not all((build / "bin" / name).exists() for name in ("kernelhub", "kernelhub-get")) or len(variants) != 1:
        print(f"need {build}/bin/kernelhub, bin/kernelhub-get and one CPU variant in {build}/kernels/build",
              file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="kernelhub-chaos-"))
    proxy = FaultProxy(seed=args.seed, fault_rate=args.fault_rate, stall_s=args.stall).start()
    server = start_server(build, work, proxy)
    results, problems = [], []
    started = time.monotonic()
    try:
        publish(proxy, variants[0])
        proxy.enabled = True
        rng = random.Random(args.seed)
        plan = [(i, rng.random() < args.fresh, rng.randrange(args.shared)) for i in range(args.runs)]
        report_lock = threading.Lock()

        def one(item):
            i, fresh, shared = item
            cache = work / (f"fresh-{i}" if fresh else f"shared-{shared}")
            try:
                result = get(build, proxy, cache, args.timeout)
            except OSError as e:  # the harness, not kernelhub (e.g. the binary being rebuilt)
                result = {"outcome": "harness_error", "seconds": 0.0, "message": str(e)}
            result.update(run=i, cache="fresh" if fresh else "shared")
            if fresh:  # nothing else touches it: check now and free the disk
                result["problems"] = check_cache(cache)
                shutil.rmtree(cache, ignore_errors=True)
            with report_lock:
                results.append(result)
                if len(results) % 50 == 0:
                    print(f"{len(results)}/{args.runs} runs, {Counter(r['outcome'] for r in results)}", flush=True)
            return result

        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            list(pool.map(one, plan))
        proxy.enabled = False
        for r in results:
            problems += r.get("problems", [])
        for s in range(args.shared):
            cache = work / f"shared-{s}"
            problems += check_cache(cache)
            if cache.exists():
                after = get(build, proxy, cache, args.timeout)
                if after["outcome"] != "ok":
                    problems.append(f"shared cache {s}: a fault-free run afterwards failed: {after['message']}")
    finally:
        proxy.enabled = False
        server.terminate()
        server.wait(timeout=10)
        proxy.stop()
        shutil.rmtree(work, ignore_errors=True)

    outcomes = Counter(r["outcome"] for r in results)
    bad = [r for r in results if r["outcome"] in ("crash", "hang", "harness_error")]
    errors = Counter(re.sub(r"[0-9a-f]{8,}", "<hex>", r["message"])[:160] for r in results
                     if r["outcome"] == "typed_error")
    seconds = sorted(r["seconds"] for r in results)
    summary = {
        "runs": len(results), "jobs": args.jobs, "seed": args.seed, "fault_rate": args.fault_rate,
        "wall_seconds": round(time.monotonic() - started, 1), "outcomes": dict(outcomes),
        "faults_injected": dict(proxy.counts),
        "run_seconds_p50": round(seconds[len(seconds) // 2], 2) if seconds else None,
        "run_seconds_max": round(seconds[-1], 2) if seconds else None,
        "typed_errors": dict(errors.most_common()), "crashes_or_hangs": bad[:20], "cache_problems": problems[:50],
        "cache_problem_count": len(problems),
    }
    print(json.dumps(summary, indent=1))
    if args.json:
        args.json.write_text(json.dumps(summary, indent=1) + "\n")
    return 0 if not bad and not problems and len(results) == args.runs else 1


if __name__ == "__main__":
    sys.exit(main())
