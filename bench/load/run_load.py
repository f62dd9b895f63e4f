#!/usr/bin/env python3
"""Load: N processes doing cold and warm `kernelhub get` against `kernelhub serve`
while `hub-publish` pushes a new build to the same version branch. Not a test: a script with
its last results in bench/load/RESULTS.md.

    .venv/bin/python bench/load/run_load.py [--procs 32] [--seconds 40]

Checks: every get ends in success (the server keeps answering); every reader sees the old or the
new commit whole (the files of its variant directory are exactly that commit's, checked against
the digest `kernelhub get` verified, and the file set of that build); nothing is lost (the branch
ends at the new commit, which holds every file). Reports requests/s from the server log and
p50/p99 of whole `get` calls, cold and warm.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import hub_server  # noqa: E402  (bench/hub_server.py)

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("KERNELHUB_BUILD_DIR", ROOT / "build"))
KERNELHUB = BUILD / "bin" / "kernelhub"
HUB_PUBLISH = BUILD / "bin" / "hub-publish"
REPO = "acme/load-kernels"
TOKEN = "hf_load_write"


def start_server(work: Path):
    return hub_server.start_server(KERNELHUB, work, token=TOKEN, user="load")


def publish(build_dir: Path, url: str) -> str:
    r = subprocess.run([str(HUB_PUBLISH), REPO, "--build-dir", str(build_dir), "--version", "1", "--create",
                        "--endpoint", url, "--json", "--quiet"], env=dict(os.environ, HF_TOKEN=TOKEN),
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit("hub-publish failed: " + r.stderr)
    return json.loads(r.stdout)["commit"]


def cpu_build(work: Path, name: str, marker: str | None) -> Path:
    """A copy of the CMake-built CPU variant; `marker` changes one file (the digest is recomputed)."""
    return hub_server.copy_variant(next((BUILD / "kernels" / "build").glob("torch*-cpu-*")), work / name, marker)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--procs", type=int, default=32)
    ap.add_argument("--seconds", type=float, default=40)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="kh-load."))
    server, url = start_server(work)
    try:
        old_commit = publish(cpu_build(work, "old", None), url)
        new_build = cpu_build(work, "new", "load test: the new build")
        env = dict(os.environ, HF_ENDPOINT=url, HF_HUB_DISABLE_XET="1", KERNELHUB_MAX_PARALLEL="4")
        env.pop("HF_TOKEN", None)
        results: list[dict] = []
        lock = threading.Lock()
        stop = time.monotonic() + args.seconds

        def reader(i: int) -> None:
            cold = i % 2 == 0  # half cold (a fresh cache each call), half warm (one cache each)
            shared = work / f"cache-warm-{i}"
            n = 0
            while time.monotonic() < stop:
                cache = work / f"cache-cold-{i}-{n}" if cold else shared
                t = time.perf_counter()
                r = subprocess.run([str(KERNELHUB), "get", REPO, "--version", "1", "--json"],
                                   env=dict(env, HF_HUB_CACHE=str(cache)), capture_output=True, text=True)
                seconds = time.perf_counter() - t
                entry = {"cold": cold, "rc": r.returncode, "seconds": seconds,
                         "error": r.stderr.strip()[-300:] if r.returncode else ""}
                if r.returncode == 0:
                    got = json.loads(r.stdout)
                    entry["commit"] = got["revision"]
                    entry["files"] = sorted(p.name for p in Path(got["path"]).iterdir())
                    entry["marker"] = "load test: the new build" in (Path(got["path"]) / "layers.py").read_text()
                if cold:
                    shutil.rmtree(cache, ignore_errors=True)
                with lock:
                    results.append(entry)
                n += 1

        threads = [threading.Thread(target=reader, args=(i,)) for i in range(args.procs)]
        log_start = len((work / "server.log").read_text(errors="replace").splitlines())
        t0 = time.monotonic()
        for t in threads:
            t.start()
        time.sleep(args.seconds / 3)
        publish_started = time.monotonic() - t0
        new_commit = publish(new_build, url)
        publish_done = time.monotonic() - t0
        for t in threads:
            t.join()
        elapsed = time.monotonic() - t0
        log_lines = (work / "server.log").read_text(errors="replace").splitlines()[log_start:]
        statuses = [int(m.group(1)) for line in log_lines if (m := re.search(r" (\d{3}) ", line))]

        ok = [r for r in results if r["rc"] == 0]
        failed = [r for r in results if r["rc"] != 0]
        torn = [r for r in ok if r["commit"] not in (old_commit, new_commit)
                or r["marker"] != (r["commit"] == new_commit)]
        final = subprocess.run([str(KERNELHUB), "get", REPO, "--version", "1", "--json"],
                               env=dict(env, HF_HUB_CACHE=str(work / "cache-final")), capture_output=True, text=True)
        final_commit = json.loads(final.stdout)["revision"] if final.returncode == 0 else "(failed)"

        def pct(values, q):
            values = sorted(values)
            return values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")

        print(f"## Load: {args.procs} processes, {elapsed:.0f} s, hub-publish of a new build at "
              f"{publish_started:.1f}-{publish_done:.1f} s\n")
        print("| measure | value |\n|---|---|")
        print(f"| `kernelhub get` calls | {len(results)} ({len(failed)} failed) |")
        print(f"| saw the old commit / the new commit | {sum(r.get('commit') == old_commit for r in ok)} / "
              f"{sum(r.get('commit') == new_commit for r in ok)} |")
        print(f"| torn reads (a commit's files mixed with another's) | {len(torn)} |")
        print(f"| server requests | {len(log_lines)} ({len(log_lines) / elapsed:.0f}/s), "
              f"5xx: {sum(s >= 500 for s in statuses)} |")
        for cold in (True, False):
            secs = [r["seconds"] for r in ok if r["cold"] == cold]
            print(f"| {'cold' if cold else 'warm'} get, p50 / p99 (whole process) | "
                  f"{statistics.median(secs) if secs else float('nan'):.3f} s / {pct(secs, 0.99):.3f} s |")
        print(f"| branch v1 after the run | {'the new commit' if final_commit == new_commit else final_commit} |")
        for r in failed[:5]:
            print(f"\nfailed: {r['error']}")
        return 0 if not failed and not torn and final_commit == new_commit else 1
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
