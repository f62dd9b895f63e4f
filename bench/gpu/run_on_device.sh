#!/usr/bin/env bash
# Builds kernelhub on the GPU machine (its own torch, nvcc, cmake) and runs the GPU checks.
# Usage there: bash bench/gpu/run_on_device.sh [steps...]   steps: build env example demo correctness bench
# Builds the way every device script does (bench/device_sysroot.sh; run bench/device_debs.sh here
# first and carry .debs). The correctness step loads through the `kernels` package: carry its
# wheel and tomlkit's in .whl/. Writes the logs, env.json, example.txt and correctness.txt to $OUT.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
out="${OUT:-/tmp/out}"
mkdir -p "$out"
steps="${*:-build env example demo correctness}"
build=build-gpu
log() { printf '\n== %s\n' "$*"; }
source bench/device_sysroot.sh  # also for the steps after build: toml++ and cpp-httplib at run time

if [[ " $steps " == *" build "* ]]; then
  log "machine"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "gpus", torch.cuda.device_count())'
  log "configure + build (torch from python3, nvcc $(nvcc --version | tail -1))"
  cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE="$(command -v python3)" \
    -DBUILD_TESTING=OFF -DKERNELHUB_DEVELOPER=OFF -DCMAKE_PREFIX_PATH="$sysroot/usr" \
    -DKERNELHUB_KERNEL_ARCHS=9.0 -DTORCH_CUDA_ARCH_LIST=9.0 >"$out/configure.log" 2>&1 ||
    { tail -40 "$out/configure.log"; exit 1; }
  time cmake --build $build -j "$(nproc)" >"$out/build.log" 2>&1 || { grep -E "error|FAILED" -A5 "$out/build.log" | head -60; exit 1; }
  ls $build/kernels/build/
fi
export LOCAL_KERNELS="kernelhub/reference-kernels=$root/$build/kernels"
if [[ " $steps " == *" env "* ]]; then
  log "kernelhub env --json"
  $build/bin/kernelhub env --json | tee "$out/env.json"
  log "kernelhub get (the chosen variant for this machine)"
  $build/bin/kernelhub get kernelhub/reference-kernels --version 1
fi
if [[ " $steps " == *" example "* ]]; then
  log "examples/rms_norm_example (plain C++, no Python) on this GPU"
  $build/bin/rms_norm_example | tee "$out/example.txt"
fi
if [[ " $steps " == *" demo "* ]]; then
  log "scripts/demo.sh (what make demo runs after its build): publish both variants, get the CUDA one, call it"
  VIRTUAL_ENV="${VIRTUAL_ENV:-$(dirname "$(dirname "$(command -v python3)")")}" scripts/demo.sh "$build" |
    tee "$out/demo.txt"
fi
if [[ " $steps " == *" correctness "* ]] && [ -f bench/gpu_correctness.py ]; then
  log "GPU correctness suite"
  python3 bench/gpu_correctness.py --build-dir "$root/$build" 2>&1 | tee "$out/correctness.txt"
fi
if [[ " $steps " == *" bench "* ]] && [ -f bench/run_bench.py ]; then
  log "benchmarks"
  KERNELHUB_BUILD_DIR="$root/$build" python3 bench/run_bench.py --out "$out" 2>&1 | tail -60
fi
