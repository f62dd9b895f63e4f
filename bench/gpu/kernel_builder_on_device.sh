#!/usr/bin/env bash
# On the GPU machine: build kernelhub's C++ side (no Python binding, no server), the reference
# kernels' CUDA variant and the kernel-builder-style fixtures (tests/fixtures/kernel_builder, built
# standalone, as kernel-builder's own CMake would be) for sm_90 against the machine's torch, then
# load each CUDA variant through C++ get_kernel (`kernelhub get` and bench/gpu/kernel_builder_check)
# without LD_LIBRARY_PATH and run the ops against float64. Everything it prints and writes goes to
# $OUT. Debian headers the image lacks travel in .debs/ (carry: [".debs"]):
# (bench/device_sysroot.sh says which).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
out="${OUT:-/tmp/out}"
mkdir -p "$out"
log() { printf '\n== %s\n' "$*" | tee -a "$out/summary.txt"; }

log "machine"
{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
  nvcc --version | tail -1
  echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
} 2>&1 | tee -a "$out/summary.txt"

source bench/device_sysroot.sh

log "build kernelhub (C++), the reference kernels and kernel_builder_check"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE="$(command -v python3)" \
  -DBUILD_TESTING=OFF -DKERNELHUB_WITH_SERVER=OFF -DKERNELHUB_BUILD_PYTHON=OFF -DKERNELHUB_DEVELOPER=OFF \
  -DCMAKE_PREFIX_PATH="$sysroot/usr" -DKERNELHUB_KERNEL_ARCHS=9.0 -DTORCH_CUDA_ARCH_LIST=9.0 \
  >"$out/configure.log" 2>&1 || { tail -40 "$out/configure.log"; exit 1; }
cmake --build build-gpu -j "$(nproc)" --target kernelhub kernel_builder_check reference_kernels \
  >"$out/build.log" 2>&1 || { grep -E "error|FAILED" -A5 "$out/build.log" | head -60; exit 1; }

log "build the kernel-builder fixtures standalone (sm_90)"
cmake -S tests/fixtures/kernel_builder -B build-kb -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DPython3_EXECUTABLE="$(command -v python3)" -DKB_CUDA_ARCHS=9.0 -DTORCH_CUDA_ARCH_LIST=9.0 \
  >"$out/kb-configure.log" 2>&1 || { tail -40 "$out/kb-configure.log"; exit 1; }
cmake --build build-kb -j "$(nproc)" >"$out/kb-build.log" 2>&1 ||
  { grep -E "error|FAILED" -A5 "$out/kb-build.log" | head -60; exit 1; }
ls build-kb/kb-activation/build build-kb/kb-activation-stable/build | tee -a "$out/summary.txt"
for so in build-kb/kb-activation*/build/*-cu*/*.so; do
  echo "$so: $(readelf -d "$so" | grep -c NEEDED) NEEDED, RUNPATH: $(readelf -d "$so" | grep -c -E 'RUNPATH|RPATH')"
done | tee -a "$out/summary.txt"

export LOCAL_KERNELS="kernels-test/kb-activation=$root/build-kb/kb-activation:kernels-test/kb-activation-stable=$root/build-kb/kb-activation-stable:kernelhub/reference-kernels=$root/build-gpu/kernels"
# The driver's directory may be on LD_LIBRARY_PATH in this image; torch's and the nvidia wheels' never.
LD_LIBRARY_PATH="$(printf '%s' "${LD_LIBRARY_PATH:-}" | tr ':' '\n' | grep -v -e site-packages -e '^$' | paste -sd:)"
export LD_LIBRARY_PATH
log "kernelhub get (LD_LIBRARY_PATH=$LD_LIBRARY_PATH), from another working directory"
for repo in kernels-test/kb-activation kernels-test/kb-activation-stable kernelhub/reference-kernels; do
  (cd /tmp && "$root/build-gpu/bin/kernelhub" get "$repo" --version 1 --json) \
    >"$out/get-${repo##*/}.json" 2>"$out/get-${repo##*/}.err"
  echo "$repo: exit $? $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["variant"], len(d["ops"]), "ops", d.get("timings",""))' "$out/get-${repo##*/}.json" 2>/dev/null || tail -3 "$out/get-${repo##*/}.err")"
done | tee -a "$out/summary.txt"

log "kernel_builder_check (C++ get_kernel, ops on the GPU against float64)"
(cd /tmp && "$root/build-gpu/bin/kernel_builder_check") 2>&1 | tee -a "$out/summary.txt"
