#!/usr/bin/env python3
"""What a warm torch-free `kernelhub get` of a tvm-ffi build costs, as a whole process, and where the
time goes: not a test.

    .venv/bin/python bench/client/torch_free_get.py [--build build] [--runs 40] [--backend cpu|cuda]
                                                    [--before OLD/bin/kernelhub [--before-label TEXT]]
                                                    [--kernelhub BIN] [--json FILE] [--trace]

Publishes the reference kernels' tvm-ffi variant of --backend (<build>/kernels/build/tvm-ffi*-cpu-* or
*-cu*-*) as acme/tvm-ffi-kernels v1 on `kernelhub serve` (loopback, with <build>/bin/hub-publish),
then runs `kernelhub get acme/tvm-ffi-kernels --version 1 --json` where no torch is: no python3 on
PATH, no VIRTUAL_ENV, so kernelhub selects among the builds it loads itself (tvm-ffi) and opens the
TVM-FFI runtime it was built with. Into an empty cache and state directory: one cold get, one 2.2 s
later (it stamps the files: fetch/verification_stamps.hpp), then --runs warm gets, each a new process,
online (the revision asked of the Hub: 1 request) and with HF_HUB_OFFLINE=1 (no request), alternating.

Rows (process wall time from Python's fork to exit, median and p10-p90, ms):
  kernelhub --version                       the floor: exec, dynamic linking, static initialisers
  kernelhub env --json                      + the machine without torch (no runtime opened: kDescribe)
  kernelhub variants <variant dir> --json   + the TVM-FFI runtime found and opened, one local selection
  kernelhub get (warm, online / offline)    the whole get
each with the process's CPU time (user + system, from wait4: what a busy machine cannot inflate the
way it inflates wall time) and, for the get, its own --json timings (resolve, download, verify, load:
inside the command). --backend cuda leaves the backend to the machine (the CUDA driver is probed:
NVML, else a child process) and adds a row with the GPUs and the driver given (KERNELHUB_GPUS,
KERNELHUB_CUDA_DRIVER: no probe), the probe's share, and one with the GPUs this boot's first
process kept removed before each run (the probe each process paid before they were kept); cpu
sets KERNELHUB_BACKEND=cpu. Prints a
Markdown table; --json writes every sample. --before times an earlier build's gets in the same
rounds, with KERNELHUB_TVM_FFI_LIBRARY naming the runtime (it looked for one only in Python's).
--trace then runs env and the warm offline get once each under startup_trace.py (LD_DEBUG=files,
every line stamped): when each library is mapped, initialised and dlopened, and the gaps between.
"""

from __future__ import annotations

import argparse
import glob
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
sys.path.insert(0, str(Path(__file__).resolve().parent))
import hub_server  # noqa: E402  (bench/hub_server.py)
import startup_trace  # noqa: E402  (bench/client/startup_trace.py)

ROOT = Path(__file__).resolve().parents[2]
REPO = "acme/tvm-ffi-kernels"
TOKEN = "hf_bench_write"


def timed(argv: list[str], env: dict) -> tuple[float, float, str]:
    """(wall ms from fork to exit, CPU ms of the process: user + system, its stdout)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        process = subprocess.Popen(argv, env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(process.pid, 0)
        ms = (time.perf_counter() - start) * 1e3
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0), err.seek(0)
        if process.returncode != 0:
            raise SystemExit(f"{' '.join(argv)} failed ({process.returncode}): {err.read()[-2000:].decode()}")
        return ms, (usage.ru_utime + usage.ru_stime) * 1e3, out.read().decode()


def summary(values: list[float]) -> str:
    ordered = sorted(values)
    p10, p90 = ordered[len(ordered) // 10], ordered[(len(ordered) * 9) // 10]
    return f"{statistics.median(ordered):.1f} ({p10:.1f}-{p90:.1f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", type=Path, default=ROOT / "build")
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--backend", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--json", type=Path, help="write every sample here")
    parser.add_argument("--before", type=Path, help="an earlier build's kernelhub, timed in the same rounds")
    parser.add_argument("--before-label", default="before",
                        help="what the --before rows are called (e.g. 'development build' beside a tarball)")
    parser.add_argument("--trace", action="store_true",
                        help="then one run of env and of the warm offline get under startup_trace.py: where "
                             "their time goes, library by library")
    parser.add_argument("--kernelhub", type=Path,
                        help="the kernelhub to time (default: the build's; e.g. the CLI tarball's bin/kernelhub)")
    args = parser.parse_args()
    build = args.build.resolve()
    kernelhub = args.kernelhub.resolve() if args.kernelhub else build / "bin" / "kernelhub"
    publisher = build / "bin" / "hub-publish"
    pattern = "tvm-ffi*-cpu-*" if args.backend == "cpu" else "tvm-ffi*-cu*-*"
    variants = sorted(glob.glob(str(build / "kernels" / "build" / pattern)))
    if not variants or not kernelhub.exists() or not publisher.exists():
        raise SystemExit(f"need {kernelhub}, {publisher} and a {pattern} variant under {build}/kernels/build "
                         f"(build kernelhub, hub-publish and reference_kernels_tvm_ffi)")

    work = Path(tempfile.mkdtemp(prefix="kernelhub-torch-free-get-"))
    server, url = hub_server.start_server(kernelhub, work, token=TOKEN, user="bench")
    samples: dict[str, list] = {}
    try:
        published = work / "publish"
        for v in variants:
            shutil.copytree(v, published / Path(v).name, ignore=shutil.ignore_patterns("__pycache__"))
        subprocess.run([str(publisher), REPO, "--build-dir", str(published), "--version", "1", "--create",
                        "--endpoint", url], env=dict(os.environ, HF_TOKEN=TOKEN), check=True, capture_output=True)
        # No Python, so no torch: what a machine without torch runs.
        env = {"PATH": str(work / "no-python"), "HOME": str(work / "home"), "HF_ENDPOINT": url,
               "HF_HUB_CACHE": str(work / "cache"), "HF_HOME": str(work / "hf-home"), "HF_HUB_DISABLE_XET": "1",
               "KERNELHUB_STATE_DIR": str(work / "state"), "KERNELHUB_TRUSTED": "acme"}
        if args.backend == "cpu":
            env["KERNELHUB_BACKEND"] = "cpu"
        offline = dict(env, HF_HUB_OFFLINE="1")
        get = [str(kernelhub), "get", REPO, "--version", "1", "--json"]
        cold_ms, _, out = timed(get, env)
        cold = json.loads(out)
        time.sleep(2.2)  # past the racy window: this get stamps the files
        timed(get, env)
        prepare = {}  # command -> what runs before each of its runs
        commands = {
            "`kernelhub --version`": ([str(kernelhub), "--version"], env),
            "`kernelhub env --json`": ([str(kernelhub), "env", "--json"], env),
            "`kernelhub variants <variant dir> --json`": ([str(kernelhub), "variants", str(published), "--json"], env),
            "`kernelhub get` warm, online (1 request)": (get, env),
            "`kernelhub get` warm, HF_HUB_OFFLINE=1": (get, offline),
        }
        if args.before:  # an earlier kernelhub: the same gets, the runtime named (it looked only in Python's)
            runtime = dict(KERNELHUB_TVM_FFI_LIBRARY=cold["tvm_ffi"]["path"])
            before = [str(args.before.resolve()), *get[1:]]
            label = args.before_label
            commands[f"{label}: `kernelhub get` warm, online (1 request)"] = (before, dict(env, **runtime))
            commands[f"{label}: `kernelhub get` warm, HF_HUB_OFFLINE=1"] = (before, dict(offline, **runtime))
        if args.backend == "cuda":  # the same get told the GPUs and the driver: no probe
            machine = json.loads(timed([str(kernelhub), "env", "--json"], env)[2])
            told = dict(offline, KERNELHUB_GPUS=",".join(g["compute_capability"] for g in machine["gpus"]),
                        KERNELHUB_CUDA_DRIVER=machine["cuda_driver"] or "")
            commands["`kernelhub get` warm, HF_HUB_OFFLINE=1, GPUs and driver given (no probe)"] = (get, told)
            # The first process of a boot: the GPUs kept for it (resolver's gpu_memo.hpp) removed
            # before each run, so the driver is asked (NVML, else a child) as every process once was.
            first = "`kernelhub get` warm, HF_HUB_OFFLINE=1, first of the boot (GPUs not kept: probed)"
            commands[first] = (get, offline)
            prepare[first] = lambda: shutil.rmtree(work / "state" / "gpus", ignore_errors=True)
        for argv, e in commands.values():  # the page cache, the stamps
            timed(argv, e)
        inner: dict[str, list] = {}
        for _ in range(args.runs):
            for name, (argv, e) in commands.items():
                if name in prepare:
                    prepare[name]()
                ms, cpu, out = timed(argv, e)
                samples.setdefault(name, []).append(ms)
                samples.setdefault(name + " cpu", []).append(cpu)
                if argv[1] == "get":
                    inner.setdefault(name, []).append(json.loads(out))

        load = os.getloadavg()[0]
        print(f"{args.runs} runs of each, interleaved; {os.cpu_count()} cores, load average {load:.1f} at the end; "
              f"variant {Path(variants[0]).name}; cold get {cold_ms:.1f} ms ({cold['requests']} requests)\n")
        print("| command | process wall, median (p10-p90), ms | process CPU (user + system), median (p10-p90), ms "
              "| inside the command (its --json), median ms | requests |")
        print("|---|---|---|---|---|")
        for name in commands:
            docs = inner.get(name)
            if docs:
                seconds = {k: statistics.median(d["seconds"][k] for d in docs) * 1e3
                           for k in ("total", "resolve", "download", "verify", "load")}
                parts = ", ".join(f"{k} {v:.1f}" for k, v in seconds.items())
                requests = statistics.median(d["requests"] for d in docs)
            else:
                parts, requests = "", ""
            print(f"| {name} | {summary(samples[name])} | {summary(samples[name + ' cpu'])} | {parts} | {requests} |")
        if args.trace:
            traced = {name: commands[name] for name in commands
                      if name.startswith("`kernelhub env") or (name.startswith("`kernelhub get` warm, HF_HUB_OFFLINE=1"))}
            for name, (argv, e) in traced.items():
                print(f"\n### {name}, traced (bench/client/startup_trace.py)\n")
                print(startup_trace.trace(argv, e))
        if args.json:
            args.json.write_text(json.dumps({"samples": samples, "inner": inner, "cold_ms": cold_ms,
                                             "variant": Path(variants[0]).name, "load": load}, indent=1))
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
