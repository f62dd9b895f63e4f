"""Chaos run: N `kernelhub get` and `kernelhub download` against `kernelhub serve` through
fault_proxy.FaultProxy, then checks that nothing was left broken.

    .venv/bin/python bench/chaos/run_chaos.py --runs 1000 [--jobs 2] [--seed 1] [--fault-rate 0.3]
        [--down-every 40 --down-for 4] [--build-dir build] [--json out.json]

Each run is `get --version 1`, the same with --trust-remote-code, or `download --version 1`
(--json each), from one of three starting states:
  fresh     an empty cache of its own (probability --fresh)
  corrupt   a copy of a warm cache with one byte flipped in one blob (probability --corrupt); a
            `get` refused with "Repair it with: <command>" runs that command next, as a user would
  shared    one of --shared caches every job uses: warm loads and concurrent writers
The proxy faults 30 % of requests (resets, stalls past the client's 2 s timeout, a request never
answered, 5xx/429 bursts, truncation, a flipped byte, redirect hops) and, with --down-every, closes
its ports for --down-for seconds out of every --down-every (connections refused, the Hub down).
Checked:
  - every run ends in exit 0, or a typed error: exit 1-9 (docs/CLI.md) with `error:` on stderr
    and the error object on stdout; never a signal, another exit code, a crash marker, or a hang
    (--timeout);
  - afterwards, every blob in every cache re-hashes to its name (sha256 for 64-hex names, the git
    blob sha1 for 40-hex names) except, in a corrupt cache, the byte the harness flipped, when
    the run refused it (never when it loaded: that is a problem); a partial download kept to be
    continued (blobs/<etag>.incomplete) holds the first bytes of that blob; no writer's temp file
    (<etag>.<hex>.incomplete) is left; no `.locks` file is still locked (flock LOCK_EX|LOCK_NB
    succeeds); one more run per shared cache without faults succeeds.
Reports the worst time to a typed error, overall and by error code. Exit status 0 when every check
holds.
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


COMMANDS = {
    "get": ["get", REPO, "--version", "1", "--json"],
    "get-trust": ["get", REPO, "--version", "1", "--trust-remote-code", "--json"],
    "download": ["download", REPO, "--version", "1", "--json"],
}


def run(build: Path, proxy: FaultProxy, cache: Path, args: list[str], timeout: float) -> dict:
    """One command in `cache` (its own state directory inside it), classified."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "KERNELS_", "LOCAL_KERNELS", "KERNELHUB_"))}
    env.update(HF_ENDPOINT=proxy.hub_url, HF_HUB_CACHE=str(cache), HF_HUB_DISABLE_XET="1",
               HF_HUB_ETAG_TIMEOUT="2", HF_HUB_DOWNLOAD_TIMEOUT="2", KERNELHUB_STATE_DIR=str(cache / ".state"),
               VIRTUAL_ENV=sys.prefix)
    start = time.monotonic()
    try:
        r = subprocess.run([str(build / "bin" / "kernelhub"), *args], capture_output=True, text=True, env=env,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"outcome": "hang", "seconds": timeout, "message": f"no exit within {timeout} s"}
    seconds = time.monotonic() - start
    stderr = r.stderr.strip()
    try:
        out = json.loads(r.stdout)
    except json.JSONDecodeError:
        out = {}
    error = out.get("error") if isinstance(out, dict) else None
    if r.returncode == 0:
        outcome = "ok"
    elif 1 <= r.returncode <= 9 and " error: " in stderr and error and not any(m in stderr for m in CRASH_MARKERS):
        outcome = "typed_error"
    else:
        outcome = "crash"
    lines = [line for line in stderr.splitlines() if " error: " in line]
    return {"outcome": outcome, "rc": r.returncode, "seconds": seconds,
            "code": error.get("code") if error else None,
            "fallbacks": len(out.get("fallbacks", [])) if isinstance(out, dict) else 0,
            "message": error.get("message", "") if error else (lines[-1] if lines else stderr[-300:])}


def warm_template(build: Path, proxy: FaultProxy, work: Path, timeout: float) -> Path:
    """A cache one fault-free get and download filled: what a corrupt starting state is copied from."""
    template = work / "template"
    for name in ("get", "download"):
        r = run(build, proxy, template, COMMANDS[name], timeout)
        if r["outcome"] != "ok":
            raise RuntimeError(f"cannot fill the template cache: {r}")
    return template


def corrupt_copy(template: Path, into: Path, rng: random.Random) -> Path:
    """`template` copied to `into`, one byte of one of its blobs flipped; returns that blob."""
    shutil.copytree(template, into, symlinks=True)
    blobs = sorted(p for p in into.glob("*/blobs/*") if re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", p.name))
    blob = rng.choice(blobs)
    data = bytearray(blob.read_bytes())
    at = rng.randrange(len(data))
    data[at] ^= 0x01
    blob.write_bytes(bytes(data))
    return blob


def repair_command(message: str) -> list[str] | None:
    """The `kernelhub download ...` a refused get names, as arguments after `kernelhub`."""
    if "Repair it with: kernelhub " not in message:
        return None
    return message.split("Repair it with: kernelhub ", 1)[1].split() + ["--json"]


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


def published_contents(variant: Path) -> dict[str, bytes]:
    """Each published file's content by the names its blob can have (sha256 and git blob sha1)."""
    out = {}
    for f in variant.rglob("*"):
        if f.is_file() and "__pycache__" not in f.parts:
            data = f.read_bytes()
            out[hashlib.sha256(data).hexdigest()] = data
            out[hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()] = data
    return out


def check_cache(cache: Path, contents: dict[str, bytes] | None = None, flipped: Path | None = None) -> list[str]:
    """Problems left in a cache at rest: bad blobs (but `flipped`, the harness's own), partial files
    that are not the start of their blob (`contents` by blob name, when known), writers' temp files,
    held locks."""
    problems = []
    if not cache.exists():
        return problems
    for path in cache.rglob("*"):
        if path.is_symlink() or not path.is_file():
            continue
        name = path.name
        if name.endswith(".incomplete"):
            etag = name[: -len(".incomplete")]
            if not re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", etag):
                problems.append(f"left behind by a writer: {path}")
            elif contents is not None and etag in contents and not contents[etag].startswith(path.read_bytes()):
                problems.append(f"partial download {path} is not the start of its blob")
        elif path.parent.name == "blobs":
            if flipped is not None and path == flipped:
                continue
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


def blob_intact(blob: Path) -> bool:
    return (sha256(blob) if len(blob.name) == 64 else git_blob_sha1(blob)) == blob.name


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--fault-rate", type=float, default=0.3, help="share of requests that get a fault")
    parser.add_argument("--fresh", type=float, default=0.25, help="share of runs in a fresh (cold) cache")
    parser.add_argument("--corrupt", type=float, default=0.15, help="share of runs in a warm cache with a flipped byte")
    parser.add_argument("--shared", type=int, default=3, help="caches shared by all jobs")
    parser.add_argument("--stall", type=float, default=3.0, help="seconds a stall holds a response")
    parser.add_argument("--down-every", type=float, default=40.0, help="the Hub's ports close once every this "
                        "many seconds (0: never)")
    parser.add_argument("--down-for", type=float, default=4.0, help="for this many seconds")
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
    proxy = FaultProxy(seed=args.seed, fault_rate=args.fault_rate, stall_s=args.stall, hang_s=args.timeout / 2,
                       down_every=args.down_every or None, down_for=args.down_for).start()
    server = start_server(build, work, proxy)
    contents = published_contents(variants[0])
    results, problems = [], []
    started = time.monotonic()
    try:
        publish(proxy, variants[0])
        template = warm_template(build, proxy, work, args.timeout)
        proxy.enabled = True
        rng = random.Random(args.seed)
        plan = []
        for i in range(args.runs):
            draw = rng.random()
            state = "fresh" if draw < args.fresh else "corrupt" if draw < args.fresh + args.corrupt else "shared"
            plan.append((i, state, rng.randrange(args.shared), rng.choice(sorted(COMMANDS)), rng.randrange(1 << 30)))
        report_lock = threading.Lock()

        def one(item):
            i, state, shared, command, seed = item
            cache = work / (f"shared-{shared}" if state == "shared" else f"{state}-{i}")
            flipped = corrupt_copy(template, cache, random.Random(seed)) if state == "corrupt" else None
            try:
                result = run(build, proxy, cache, COMMANDS[command], args.timeout)
                if flipped is not None and result["outcome"] == "typed_error":
                    repair = repair_command(result["message"])
                    if repair:  # as a user would: the command the error gave
                        fixed = run(build, proxy, cache, repair, args.timeout)
                        result["repair"] = {k: fixed[k] for k in ("outcome", "rc", "seconds", "code")}
                        if fixed["outcome"] not in ("ok", "typed_error"):
                            result["outcome"] = fixed["outcome"]
            except OSError as e:  # the harness, not kernelhub (e.g. the binary being rebuilt)
                result = {"outcome": "harness_error", "seconds": 0.0, "message": str(e)}
            result.update(run=i, state=state, command=command)
            if flipped is not None:
                intact = blob_intact(flipped)
                result["flipped_repaired"] = intact
                if result["outcome"] == "ok" and command != "download" and not intact:
                    result.setdefault("problems", []).append(f"run {i} loaded a cache holding a changed blob")
                if result["outcome"] == "ok" and command == "download" and not intact:
                    result.setdefault("problems", []).append(f"run {i}: download left a changed blob")
            if state != "shared":  # nothing else touches it: check now and free the disk
                result.setdefault("problems", []).extend(check_cache(cache, contents, flipped))
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
            problems += check_cache(cache, contents)
            if cache.exists():
                after = run(build, proxy, cache, COMMANDS["get"], args.timeout)
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
    typed = [r for r in results if r["outcome"] == "typed_error"]
    errors = Counter(re.sub(r"[0-9a-f]{8,}", "<hex>", r["message"])[:160] for r in typed)
    worst = {}
    for r in typed:
        worst[r["code"]] = max(worst.get(r["code"], 0.0), round(r["seconds"], 2))
    by_state = {}
    for r in results:
        by_state.setdefault(f"{r['state']} {r['command']}", Counter())[r["outcome"]] += 1
    corrupt = [r for r in results if r["state"] == "corrupt"]
    seconds = sorted(r["seconds"] for r in results)
    summary = {
        "runs": len(results), "jobs": args.jobs, "seed": args.seed, "fault_rate": args.fault_rate,
        "down_every": args.down_every, "down_for": args.down_for, "down_windows": proxy.down_windows,
        "wall_seconds": round(time.monotonic() - started, 1), "outcomes": dict(outcomes),
        "by_state_and_command": {k: dict(v) for k, v in sorted(by_state.items())},
        "faults_injected": dict(proxy.counts),
        "runs_that_fell_back_to_the_cache": sum(1 for r in results if r.get("fallbacks")),
        "corrupt_starts": {"runs": len(corrupt), "repaired": sum(1 for r in corrupt if r.get("flipped_repaired")),
                           "refused_then_repaired_by_the_named_command":
                               sum(1 for r in corrupt if r.get("repair", {}).get("outcome") == "ok")},
        "run_seconds_p50": round(seconds[len(seconds) // 2], 2) if seconds else None,
        "run_seconds_max": round(seconds[-1], 2) if seconds else None,
        "typed_error_seconds_max": round(max((r["seconds"] for r in typed), default=0.0), 2),
        "typed_error_seconds_max_by_code": worst,
        "typed_errors_by_code": dict(Counter(r["code"] for r in typed)),
        "typed_errors": dict(errors.most_common()), "crashes_or_hangs": bad[:20], "cache_problems": problems[:50],
        "cache_problem_count": len(problems),
    }
    print(json.dumps(summary, indent=1))
    if args.json:
        args.json.write_text(json.dumps(summary, indent=1) + "\n")
    return 0 if not bad and not problems and len(results) == args.runs else 1


if __name__ == "__main__":
    sys.exit(main())
