#!/usr/bin/env python3
"""How long `kernelhub get` and `kernelhub download` take when the Hub is down: not a test.

    .venv/bin/python bench/client/hub_down.py [--build-dir build] [--json out.json] [--only NAME,...]

Publishes the reference CPU kernel on a `kernelhub serve` on loopback (org `acme`, a trusted
publisher), fills a cache with one `kernelhub get`, stops the server, and then its address
  refused   has nothing listening (connection refused at once)
  stalled   has a socket that accepts every connection and never answers
(the Hub's own address, so that what the cache remembers of it applies) and times, as whole
processes, with the default timeouts (10 s connect, 10 s API, 10 s read):
  get                   kernelhub get acme/reference-kernels --version 1
  get-trust             the same with --trust-remote-code (no publisher check)
  download              kernelhub download acme/reference-kernels --version 1
each with the warm cache (a fallback is possible) and with an empty one (only an error is).
Prints a Markdown table (seconds, exit status, the last line of stderr) and, with --json, writes
every result.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cluster"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "chaos"))
from fault_proxy import SilentServer  # noqa: E402
from site_cache import Site  # noqa: E402

REPO = "acme/reference-kernels"


COMMANDS = {
    "get": ["get", REPO, "--version", "1"],
    "get-trust": ["get", REPO, "--version", "1", "--trust-remote-code"],
    "download": ["download", REPO, "--version", "1"],
}


def run(build: Path, args: list[str], env: dict, timeout: float = 600) -> dict:
    start = time.monotonic()
    r = subprocess.run([str(build / "bin" / "kernelhub"), *args], env=env, capture_output=True, text=True,
                       timeout=timeout)
    lines = [line for line in r.stderr.strip().splitlines() if line.strip()]
    return {"seconds": round(time.monotonic() - start, 2), "rc": r.returncode,
            "stderr_first": lines[0] if lines else "", "stderr_last": lines[-1] if lines else ""}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build-dir", type=Path, default=Path("build"))
    parser.add_argument("--json", type=Path)
    parser.add_argument("--only", default="", help="comma-separated case names (e.g. warm/refused/get)")
    opts = parser.parse_args()
    build = opts.build_dir.resolve()
    only = {c for c in opts.only.split(",") if c}

    work = Path(tempfile.mkdtemp(prefix="kernelhub-hub-down-"))
    site = Site(work / "site", build, cache=False).start()
    stalled = None
    results = []
    try:
        site.publish(REPO)
        warm = work / "warm"
        base = site.node_env(warm, own_torch=True)
        base["VIRTUAL_ENV"] = sys.prefix  # the torch `download` selects for
        filled = run(build, ["get", REPO, "--version", "1"], base)
        if filled["rc"] != 0:
            raise RuntimeError(f"could not fill the cache: {filled}")
        site.stop()  # the Hub goes down: the same address now refuses connections
        for hub in ("refused", "stalled"):
            if hub == "stalled":  # then hangs: the same address accepts and never answers
                stalled = SilentServer(site.hub_port)
            for cache in ("warm", "cold"):
                for name, args in COMMANDS.items():
                    case = f"{cache}/{hub}/{name}"
                    if only and case not in only:
                        continue
                    cache_dir = warm if cache == "warm" else work / f"cold-{hub}-{name}"
                    env = dict(base, HF_HUB_CACHE=str(cache_dir), KERNELHUB_STATE_DIR=str(cache_dir / ".state"))
                    result = {"case": case, **run(build, args, env)}
                    results.append(result)
                    print(f"{case}: {result['seconds']} s, exit {result['rc']}", file=sys.stderr, flush=True)
    finally:
        if stalled is not None:
            stalled.close()
        site.stop()

    print("| case | seconds | exit | stderr (last line) |")
    print("|---|---|---|---|")
    for r in results:
        last = r["stderr_last"].replace("|", "\\|")
        print(f"| {r['case']} | {r['seconds']} | {r['rc']} | {last[:160]} |")
    if opts.json:
        opts.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
