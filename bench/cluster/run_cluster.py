#!/usr/bin/env python3
"""Cluster start-up (docs/CLUSTER.md): N simulated nodes, each with its own cache, load the
reference kernel's CPU variant at the same moment, in three set-ups:

  direct   every node asks the Hub (`kernelhub serve`) itself
  shared   every process asks the Hub itself, all into one cache (the ranks of one node)
  site     every node asks a site cache (nginx, docs/nginx/kernelhub-site-cache.conf) in front of it
  offline  a login node runs `kernelhub download --lockfile` into one shared cache; the nodes load
           from it with HF_HUB_OFFLINE=1

and reports, for each N, the requests that reached the Hub and the seconds from launch until the
last node has loaded. A node is `cluster_node` (get_kernel's fetch stage: resolve, list, select,
download, verify, without LibTorch) or, with --full, `kernelhub get` (the whole C++ get_kernel,
LibTorch started and the library loaded). Not a test: a script whose results are in RESULTS.md.

    .venv/bin/python bench/cluster/run_cluster.py [--nodes 1,8,64,256,1024] [--full 1,8,64] [--csv F]
"""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from site_cache import ROOT, Site, node_results, run_nodes  # noqa: E402

BUILD = Path(os.environ.get("KERNELHUB_BUILD_DIR", ROOT / "build"))
REPO = "acme/cluster-bench"


def bucket(target: str) -> str:
    """The Hub's rate-limit bucket a request counts in (docs/CLUSTER.md): `/resolve/` URLs are
    "resolvers", other `/api/` URLs "api"; storage objects are served from elsewhere (a CDN)."""
    return "resolve" if "/resolve/" in target else "api" if target.startswith("/api/") else "storage"


def measure(site: Site, work: Path, count: int, full: bool, how: tuple = ("--version", "1"),
            shared: Path | None = None, **env: str) -> tuple[Counter, float, Counter]:
    """(upstream requests by bucket, seconds until all loaded, failures by error code) for `count`
    nodes started at once, each with a cache of its own under `work` (or all with `shared`). A
    site cache starts cold."""
    if site.cache:
        site.cache.stop()
        shutil.rmtree(site.cache.cache_dir, ignore_errors=True)
        site.cache.start()
    command = ([str(BUILD / "bin" / "kernelhub"), "get", REPO, *how, "--json"] if full
               else site.node_command(REPO, *how))
    envs = [site.node_env(shared or work / f"node{i}", own_torch=full, **env) for i in range(count)]
    before = len(site.upstream())
    results, seconds = run_nodes(command, envs, timeout=1800)
    failures = Counter(r.get("error", {}).get("code", "?") for r in node_results(results) if r["rc"] != 0)
    time.sleep(0.2)  # the Hub logs a request after answering it
    return Counter(bucket(target) for _, target, _ in site.upstream()[before:]), seconds, failures


def row(setup: str, node: str, nodes: int, requests: Counter, seconds: float, failed: str) -> dict:
    return {"setup": setup, "node": node, "nodes": nodes, "upstream": sum(requests.values()),
            **{b: requests[b] for b in ("api", "resolve", "storage")}, "seconds": f"{seconds:.2f}", "failed": failed}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", default="1,8,64,256,1024")
    ap.add_argument("--full", default="1,8,64", help="node counts also run as `kernelhub get` (with the load)")
    ap.add_argument("--csv", type=Path, help="also write the rows to this CSV file")
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # the publish's upload bars
    counts = [int(n) for n in args.nodes.split(",")]
    full_counts = [int(n) for n in args.full.split(",") if n]
    work = Path(tempfile.mkdtemp(prefix="kh-cluster."))
    rows = []
    try:
        direct = Site(work / "direct", BUILD, cache=False).start()
        cached = Site(work / "site", BUILD).start()
        for s in (direct, cached):
            s.publish(REPO)
        # The offline set-up: a lock file and one shared cache, filled once on a "login node".
        project = work / "project"
        project.mkdir()
        (project / "kernels.toml").write_text(f'[dependencies]\n"{REPO}" = 1\n')
        shared = work / "shared-fs"
        login = direct.node_env(shared, own_torch=True)
        before, started = len(direct.upstream()), time.monotonic()
        for step in (["lock", str(project)], ["download", "--lockfile", str(project / "kernels.lock"), "--quiet"]):
            r = subprocess.run([str(BUILD / "bin" / "kernelhub"), *step], env=login, capture_output=True, text=True)
            if r.returncode != 0:
                raise SystemExit(f"login node: kernelhub {step[0]} failed: {r.stderr}")
        seconds = time.monotonic() - started
        time.sleep(0.2)  # the Hub logs a request after answering it
        requests = Counter(bucket(target) for _, target, _ in direct.upstream()[before:])
        rows.append(row("offline: the login node", "kernelhub lock + download --lockfile", 1, requests, seconds, "0"))
        offline = {"how": ("--lockfile", str(project / "kernels.lock")), "shared": shared, "HF_HUB_OFFLINE": "1",
                   "HF_ENDPOINT": "http://127.0.0.1:9"}  # nothing listens there

        for full in (False, True):
            kind = "kernelhub get" if full else "cluster_node"
            for n in (full_counts if full else counts):
                tag = f"{kind}-{n}".replace(" ", "-")
                setups = (("direct", direct, {}), ("one shared cache", direct, {"shared": work / tag / "shared"}),
                          ("site cache", cached, {}), ("offline", direct, offline))
                for name, site, extra in setups:
                    requests, seconds, failures = measure(site, work / tag, n, full, **extra)
                    failed = ", ".join(f"{k} {v}" for k, v in sorted(failures.items())) or "0"
                    rows.append(row(name, kind, n, requests, seconds, failed))
                    print(f"{name:16} {kind:13} {n:5} nodes: {sum(requests.values()):6} upstream requests "
                          f"({dict(requests)}), all loaded in {seconds:7.2f} s, failed: {failed}",
                          file=sys.stderr, flush=True)
                    shutil.rmtree(work / tag, ignore_errors=True)
        print("| set-up | node process | nodes | requests reaching the Hub | of which API | resolve | storage "
              "| all loaded (s) | failed |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---|")
        for r in rows:
            print("| " + " | ".join(str(v) for v in r.values()) + " |")
        if args.csv:
            with args.csv.open("w", newline="") as f:
                writer = csv.DictWriter(f, fieldnames=list(rows[0]))
                writer.writeheader()
                writer.writerows(rows)
        return 0 if all(r["failed"] == "0" for r in rows) else 1
    finally:
        for s in locals().get("direct"), locals().get("cached"):
            if s:
                s.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
