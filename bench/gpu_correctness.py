#!/usr/bin/env python3
"""The reference kernels' correctness suite on a GPU (run on the H200).

    python bench/gpu_correctness.py                    # the variants under build/kernels (from `make`)
    python bench/gpu_correctness.py --build /tmp/kb    # first build kernels/ alone against this
                                                       # machine's torch and nvcc, into /tmp/kb

It loads the CUDA variant the way users do, kernels.get_local_kernel(<dir>, backend=None), checks
that a CUDA variant was chosen and that its ops run on GPU tensors, then runs
tests/python/reference_kernels/ with KERNELHUB_TEST_DEVICE=cuda: every op against float64 on
GPU tensors (poisoned outputs, odd sizes, 65536 rows, non-contiguous layouts), against the
transformers / diffusers modules where they are installed, torch.compile(fullgraph=True), and
kernelize on a tiny Qwen3. Needs torch with CUDA, pytest and the `kernels` package; --log writes
the whole report to a file as well. The exit status is pytest's.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEST_DIR = ROOT / "tests" / "python" / "reference_kernels"


def log(out, text: str) -> None:
    print(text, flush=True)
    if out:
        out.write(text + "\n")
        out.flush()


def run_logged(cmd: list[str], out, env=None, cwd=None) -> int:
    log(out, "$ " + " ".join(cmd))
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=cwd)
    assert proc.stdout is not None
    for line in proc.stdout:
        log(out, line.rstrip("\n"))
    return proc.wait()


def build(build_dir: Path, out, jobs: int, cxx: str) -> int:
    """Configure and build kernels/ standalone (both variants) against this interpreter's torch."""
    start = time.monotonic()
    cc = str(Path(cxx).with_name(Path(cxx).name.replace("g++", "gcc")))
    env = dict(os.environ, CXX=cxx, CUDAHOSTCXX=cxx, CC=cc)
    rc = run_logged(["cmake", "-S", str(ROOT / "kernels"), "-B", str(build_dir), "-G", "Ninja",
                     "-DCMAKE_BUILD_TYPE=Release", f"-DPython3_EXECUTABLE={sys.executable}",
                     f"-DCMAKE_CXX_COMPILER={cxx}", f"-DCMAKE_CUDA_HOST_COMPILER={cxx}"], out, env=env)
    if rc == 0:
        rc = run_logged(["cmake", "--build", str(build_dir), "-j", str(jobs)], out, env=env)
    log(out, f"build: exit {rc} after {time.monotonic() - start:.0f} s")
    return rc


def smoke(kernels_dir: Path, out) -> None:
    """Load through kernels (backend=None, as users do) and run one op on the GPU."""
    import kernels
    import torch

    k = kernels.get_local_kernel(kernels_dir, backend=None)
    variant = Path(k.__file__).parent
    needed = subprocess.run(["readelf", "-d", str(next(variant.glob("*.so")))], capture_output=True, text=True).stdout
    if "libstdc++" not in needed:
        log(out, "WARNING: the kernel library does not link libstdc++ dynamically: a failing TORCH_CHECK may "
                 "crash instead of raising (see --cxx)")
    meta = json.loads((variant / "metadata.json").read_text())
    log(out, f"loaded {meta['id']} from {variant.name}: backend {meta['backend']}")
    assert meta["backend"]["type"] == "cuda", "kernels chose a non-CUDA variant"
    x = torch.randn(4, 4096, device="cuda", dtype=torch.bfloat16)
    y = k.rms_norm(x, None, 1e-6)
    ref = (x.double() * torch.rsqrt(x.double().pow(2).mean(-1, keepdim=True) + 1e-6))
    rel = ((y.double() - ref).norm() / ref.norm()).item()
    log(out, f"smoke: rms_norm bf16 [4, 4096] on {torch.cuda.get_device_name()} relative error {rel:.2e}")
    assert rel < 1e-2


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", type=Path, help="build kernels/ standalone into this directory first")
    p.add_argument("--build-dir", type=Path, default=ROOT / "build",
                   help="a build directory holding kernels/build/<variant> (default: build/)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 4)
    # The kernel must share torch's C++ runtime: a compiler that links its own libstdc++ statically
    # (the H200 image's /opt/gcc does) builds a library whose every TORCH_CHECK failure segfaults,
    # since the exception crosses two runtimes. The distribution's g++ links the shared one.
    p.add_argument("--cxx", default="/usr/bin/g++" if Path("/usr/bin/g++").exists() else "g++",
                   help="host C++ compiler for --build (default: /usr/bin/g++)")
    p.add_argument("--log", type=Path, help="also write the report here")
    p.add_argument("pytest_args", nargs="*", help="extra pytest arguments (after --)")
    args = p.parse_args()
    out = open(args.log, "w") if args.log else None

    import torch

    log(out, f"python {sys.version.split()[0]}, torch {torch.__version__} (CUDA {torch.version.cuda})")
    if not torch.cuda.is_available():
        log(out, "no CUDA device: nothing to check here")
        return 2
    for i in range(torch.cuda.device_count()):
        log(out, f"GPU {i}: {torch.cuda.get_device_name(i)}, compute capability "
                 f"{'.'.join(map(str, torch.cuda.get_device_capability(i)))}")

    build_dir = args.build_dir
    if args.build:
        if build(args.build, out, args.jobs, args.cxx) != 0:
            return 1
        build_dir = args.build
    kernels_dir = build_dir / "kernels"
    smoke(kernels_dir, out)

    env = dict(os.environ, KERNELHUB_TEST_DEVICE="cuda", KERNELHUB_BUILD_DIR=str(build_dir))
    start = time.monotonic()
    rc = run_logged([sys.executable, "-m", "pytest", str(TEST_DIR), "-q", "-rs", "-p", "no:cacheprovider",
                     "--durations=10", *args.pytest_args], out, env=env, cwd=str(ROOT))
    log(out, f"pytest: exit {rc} after {time.monotonic() - start:.0f} s")
    return rc


if __name__ == "__main__":
    sys.exit(main())
