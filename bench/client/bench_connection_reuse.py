#!/usr/bin/env python
"""What keeping the Hub connection across get_kernel calls saves: N warm get_kernel calls in one
process, each asking `kernelhub serve` (loopback) for the revision, with a new libcurl transport
per call (as before the process kept one Session) and with the process's Session. Not a test.

    PYTHONPATH=build/python .venv/bin/python bench/client/bench_connection_reuse.py [--build build]
        [--repeat 50] [--rounds 3] [--json out.json]

Publishes the reference kernel's CPU variant as acme/reference-kernels v1, fills the cache and
stamps it (one process, then one more past the 2 s racy window), then runs, alternately, `rounds`
processes of each kind: bench/client/get_kernel_bench --version 1 --backend cpu --repeat N+1
(`--transport-per-call 1` for the old way). The first call of each process is left out (it
detects the machine and loads the library); of the rest, the median wall time, and the TCP
connections (libcurl's count through the transport) and HTTP requests (the server's log) a call;
also the resolve step alone (LoadTimings::resolve: the revision request, the listing, selection),
which holds the request and little else, and p10 (the calls no other process preempted on a busy
machine).
Loopback hides what a connection costs over a network: no TLS handshake, no round trip to speak of.
Prints Markdown.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from bench_get_kernel import REPO, ROOT, bench_tools, cpp_calls  # the same program, server and publish

MODES = {"a new transport per call (before)": ["--transport-per-call", "1"], "the process's Session (after)": []}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=str(ROOT / "build"))
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", help="also write the raw numbers here")
    args = parser.parse_args()
    bench, start_server, child_env, publish = bench_tools(Path(args.build).resolve())
    calls: dict[str, list[dict]] = {mode: [] for mode in MODES}
    requests: dict[str, int] = {mode: 0 for mode in MODES}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        server = start_server(tmp / "server", [])
        try:
            publish(server, REPO)
            env = child_env(server, tmp / "cache")
            env.pop("LD_LIBRARY_PATH", None)
            cpp_calls(bench, env, server, ["--version", "1"], 1)  # downloads
            time.sleep(2.2)  # past the racy window: the next process stamps every file
            cpp_calls(bench, env, server, ["--version", "1"], 1)
            for _ in range(args.rounds):
                for mode, flags in MODES.items():
                    got, seen = cpp_calls(bench, env, server, ["--version", "1", *flags], args.repeat + 1)
                    calls[mode] += got[1:]
                    requests[mode] += seen - got[0]["requests"]
        finally:
            server.stop()

    results = {}
    for mode in MODES:
        rest = calls[mode]
        wall = sorted(c["wall_ms"] for c in rest)
        results[mode] = {
            "calls": len(rest),
            "median_ms": statistics.median(wall),
            "p10_ms": wall[len(wall) // 10],
            "p90_ms": wall[len(wall) * 9 // 10],
            "resolve_median_ms": statistics.median(c["resolve_ms"] for c in rest),
            "connections_per_call": sum(c["connections"] for c in rest) / len(rest),
            "requests_per_call": requests[mode] / len(rest),
        }
    print(f"| warm get_kernel, repeated in one process ({args.rounds} processes x {args.repeat} calls) "
          "| median per call | p10 | p90 | resolve step (the request), median | TCP connections a call "
          "| HTTP requests a call |")
    print("|---|---|---|---|---|---|---|")
    for mode, r in results.items():
        print(f"| {mode} | {r['median_ms']:.3f} ms | {r['p10_ms']:.3f} ms | {r['p90_ms']:.3f} ms "
              f"| {r['resolve_median_ms']:.3f} ms | {r['connections_per_call']:.2f} | {r['requests_per_call']:.2f} |")
    if args.json:
        Path(args.json).write_text(json.dumps({"results": results, "calls": calls}, indent=2) + "\n")


if __name__ == "__main__":
    main()
