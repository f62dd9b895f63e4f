"""The tvm-ffi measurements of bench/gpu/tvm_ffi_on_device.sh (run there, after its build).

1. `kernelhub serve` on loopback with three repos: acme/reference-kernels-torch (the torch variants),
   acme/reference-kernels-tvm (the tvm-ffi variants), acme/reference-kernels (both).
2. The torch-free example (build/bin/tvm_ffi_rms_norm) on the CUDA tvm-ffi variant from the server:
   its own check against float64, and us/call on its own stream (CUDA events, 2000 calls).
3. kernels 0.19.1, both CUDA variants: tests/python/test_tvm_ffi_variant.py (the same results, bit
   for bit), then each op's time: CUDA graph replay of 20 calls (GPU time a call) and eager calls
   (time a call as Python sees it), median of 7.
4. `kernelhub get` in a new process, cold (empty cache) and warm: the torch path (kernelhub execs
   kernelhub-get, LibTorch) against the tvm-ffi path (loaded in kernelhub itself), and which one the
   repo with both selects.
Writes <out>/tvm_ffi.csv (section,name,variant,dtype,shape,value,unit).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "hf_kernelhub_bench_write"


def start_server(build: Path, root: Path):
    tokens = root / "tokens.json"
    tokens.write_text(json.dumps({"tokens": {TOKEN: {"user": "bench", "orgs": ["acme"], "write": True}},
                                  "organizations": {"acme": {"fullname": "Acme", "trustedKernelPublisher": True}}}))
    proc = subprocess.Popen([str(build / "bin" / "kernelhub"), "serve", "--root", str(root / "hub"), "--port", "0",
                             "--tokens", str(tokens)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    for _ in range(200):
        line = proc.stdout.readline()
        match = re.search(r"listening on (\S+) ", line or "")
        if match:
            return proc, match.group(1)
    proc.kill()
    raise SystemExit("kernelhub serve did not start")


def publish(url: str, repo: str, variants: list[Path]) -> None:
    from huggingface_hub import CommitOperationAdd, HfApi, constants

    constants.HF_HUB_DISABLE_XET = True
    api = HfApi(endpoint=url, token=TOKEN)
    api.create_repo(repo, repo_type="kernel", exist_ok=True)
    api.create_branch(repo, repo_type="kernel", branch="v1", exist_ok=True)
    ops = [CommitOperationAdd(path_in_repo=f"build/{v.name}/{f.relative_to(v).as_posix()}", path_or_fileobj=str(f))
           for v in variants for f in sorted(v.rglob("*")) if f.is_file() and "__pycache__" not in f.parts]
    api.create_commit(repo, repo_type="kernel", revision="v1", operations=ops, commit_message="publish")


def timed_process(cmd: list[str], env: dict) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    return time.perf_counter() - start, r


OP_TIMING = r'''
import json, os, statistics, sys, tempfile
from pathlib import Path
import torch, kernels
build = Path(sys.argv[1])
def only(v):
    d = Path(tempfile.mkdtemp()); (d / "build").mkdir(); (d / "build" / v.name).symlink_to(v); return d
variants = {p.name.split("-")[0] if p.name.startswith("torch") else "tvm-ffi": p
            for p in (build / "kernels" / "build").iterdir() if "-cu" in p.name}
mods = {k: kernels.get_local_kernel(only(v)) for k, v in variants.items()}
rows = []
def cases(m, dtype):
    x = lambda *s: torch.randn(*s, device="cuda", dtype=dtype)
    a, w = x(64, 4096), x(4096)
    b, o = x(8192, 4096), torch.empty(8192, 4096, device="cuda", dtype=dtype)
    c, wc = x(65536, 128), x(128)
    g = x(4096, 2 * 4096)
    h, sc, sh = x(2, 4096, 2560), x(2, 2560), x(2, 2560)
    oa, oc, og, oh = torch.empty_like(a), torch.empty_like(c), torch.empty(4096, 4096, device="cuda", dtype=dtype), torch.empty_like(h)
    return {
        "rms_norm 64x4096": lambda: m.rms_norm(a, w, 1e-6, out=oa),
        "rms_norm 8192x4096": lambda: m.rms_norm(b, w, 1e-6, out=o),
        "rms_norm 65536x128": lambda: m.rms_norm(c, wc, 1e-6, out=oc),
        "geglu 4096x8192": lambda: m.geglu(g, out=og),
        "adaln 2x4096x2560": lambda: m.adaln(h, sc, sh, None, 1e-6, "rms", out=oh),
    }
for dtype in (torch.bfloat16, torch.float32):
    for name, variant in variants.items():
        m = mods[name]
        for case, fn in cases(m, dtype).items():
            for _ in range(3): fn()
            torch.cuda.synchronize()
            # GPU time a call: 20 calls captured in a CUDA graph, replayed (no launch overhead).
            graph_us = None
            try:
                s = torch.cuda.Stream()
                s.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(s):
                    fn()
                torch.cuda.current_stream().wait_stream(s)
                graph = torch.cuda.CUDAGraph()
                with torch.cuda.graph(graph):
                    for _ in range(20): fn()
                times = []
                for _ in range(7):
                    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    e0.record(); graph.replay(); e1.record(); torch.cuda.synchronize()
                    times.append(e0.elapsed_time(e1) * 1e3 / 20)
                graph_us = statistics.median(times)
            except Exception as e:  # a launch on another stream than the capturing one fails capture
                print(f"{name} {case} {dtype}: graph capture failed: {type(e).__name__}: {e}", file=sys.stderr)
                torch.cuda.synchronize()
            # Time a call as Python sees it: 200 eager calls, CUDA events around them.
            times = []
            for _ in range(7):
                e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                e0.record()
                for _ in range(200): fn()
                e1.record(); torch.cuda.synchronize()
                times.append(e0.elapsed_time(e1) * 1e3 / 200)
            rows.append({"case": case, "variant": variants[name].name, "dtype": str(dtype).split(".")[1],
                         "graph_us": graph_us, "eager_us": statistics.median(times)})
print(json.dumps(rows))
'''


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--build-dir", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--example-calls", type=int, default=2000, help="calls the example times (fewer on a CPU)")
    a = p.parse_args()
    build, out = a.build_dir, a.out
    variants = sorted((build / "kernels" / "build").iterdir())
    torch_variants = [v for v in variants if v.name.startswith("torch")]
    tvm_variants = [v for v in variants if v.name.startswith("tvm-ffi")]
    rows: list[dict] = []

    def row(section, name, variant, dtype, shape, value, unit):
        rows.append(dict(section=section, name=name, variant=variant, dtype=dtype, shape=shape,
                         value=round(value, 4) if isinstance(value, float) else value, unit=unit))
        print(f"{section:8} {name:34} {variant:34} {dtype:9} {shape:14} {value!s:>12} {unit}", flush=True)

    import tvm_ffi.libinfo

    work = Path(tempfile.mkdtemp(prefix="tvm-ffi-bench."))
    server, url = start_server(build, work)
    try:
        publish(url, "acme/reference-kernels-torch", torch_variants)
        publish(url, "acme/reference-kernels-tvm", tvm_variants)
        publish(url, "acme/reference-kernels", variants)
        base_env = dict(os.environ, HF_ENDPOINT=url, HF_HUB_DISABLE_XET="1", VIRTUAL_ENV=sys.prefix,
                        KERNELHUB_TVM_FFI_LIBRARY=tvm_ffi.libinfo.find_libtvm_ffi())
        base_env.pop("HF_TOKEN", None)

        # 2. The torch-free example on the CUDA tvm-ffi variant.
        env = dict(base_env, HF_HUB_CACHE=str(work / "cache-example"))
        seconds, r = timed_process([str(build / "bin" / "tvm_ffi_rms_norm"), "acme/reference-kernels-tvm",
                                    "--bench", str(a.example_calls)], env)
        print(r.stdout, r.stderr, flush=True)
        row("example", "exit status", "", "", "", r.returncode, "")
        row("example", "process (get + checks + bench)", "", "", "", seconds, "s")
        if m := re.search(r"get_kernel: ([0-9.]+) ms", r.stdout):
            row("get", "tvm_ffi::get_kernel in the example, cold", "", "", "", float(m[1]) / 1e3, "s")
        for m in re.finditer(r"bench rms_norm (\w+) \[(\d+), (\d+)\]: ([0-9.]+) us/call", r.stdout):
            chosen = re.search(r"^variant (\S+)", r.stdout, re.M)
            row("op", "rms_norm (C++ example, eager)", chosen[1] if chosen else "?", m[1], f"{m[2]}x{m[3]}",
                float(m[4]), "us/call")
        with open(out / "maps.txt", "w") as f:
            f.write(r.stdout)

        # 3. kernels 0.19.1: the same results, then the op times.
        test_env = dict(os.environ, KERNELHUB_TEST_DEVICE="cuda", KERNELHUB_BUILD_DIR=str(build))
        t = subprocess.run([sys.executable, "-m", "pytest", str(ROOT / "tests" / "python" / "test_tvm_ffi_variant.py"),
                            "-q", "-p", "no:cacheprovider", "-rs"], capture_output=True, text=True, env=test_env,
                           cwd=str(ROOT), timeout=600)
        print(t.stdout[-3000:], t.stderr[-2000:], flush=True)
        summary = (t.stdout.strip().splitlines() or ["?"])[-1]
        row("check", "test_tvm_ffi_variant.py (cuda)", "", "", "", summary.replace(",", ";"), "")
        timing = subprocess.run([sys.executable, "-c", OP_TIMING, str(build)], capture_output=True, text=True,
                                timeout=600)
        print(timing.stderr[-3000:], flush=True)
        lines = timing.stdout.strip().splitlines()
        for o in json.loads(lines[-1]) if timing.returncode == 0 and lines else []:
            name, shape = o["case"].split(" ")
            if o["graph_us"] is not None:
                row("op", f"{name} (kernels 0.19.1, CUDA graph)", o["variant"], o["dtype"], shape, o["graph_us"], "us/call")
            row("op", f"{name} (kernels 0.19.1, eager)", o["variant"], o["dtype"], shape, o["eager_us"], "us/call")

        # 4. `kernelhub get` in a new process, cold and warm.
        for repo, path in (("acme/reference-kernels-torch", "torch (kernelhub-get, LibTorch)"),
                           ("acme/reference-kernels-tvm", "tvm-ffi (kernelhub itself)"),
                           ("acme/reference-kernels", "both published")):
            for kind, runs in (("cold", 3), ("warm", 5)):
                times = []
                chosen = ""
                for i in range(runs):
                    cache = work / f"cache-{repo.split('/')[1]}-{kind}-{i if kind == 'cold' else 0}"
                    env = dict(base_env, HF_HUB_CACHE=str(cache))
                    if kind == "warm" and i == 0:
                        subprocess.run([str(build / "bin" / "kernelhub"), "get", repo, "--version", "1"], env=env,
                                       capture_output=True, timeout=300)
                    seconds, r = timed_process([str(build / "bin" / "kernelhub"), "get", repo, "--version", "1",
                                                "--json"], env)
                    if r.returncode != 0:
                        print(r.stderr, flush=True)
                        continue
                    got = json.loads(r.stdout)
                    chosen = got["variant"]
                    times.append(seconds)
                if times:
                    row("get", f"kernelhub get, {kind} ({path})", chosen, "", "", statistics.median(times), "s")
    finally:
        server.terminate()
        server.wait(timeout=10)
        shutil.rmtree(work, ignore_errors=True)

    with open(out / "tvm_ffi.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["section", "name", "variant", "dtype", "shape", "value", "unit"])
        w.writeheader()
        w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
