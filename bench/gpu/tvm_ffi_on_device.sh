#!/usr/bin/env bash
# The tvm-ffi measurements on the GPU machine, in one call (docs/TVM_FFI.md):
#   1. build the CLI, the reference kernels' torch and tvm-ffi variants (CPU and CUDA, sm_90 only)
#      and the torch-free example (examples/tvm_ffi), as every device script builds
#      (bench/device_sysroot.sh);
#   2. bench/gpu/tvm_ffi_bench.py: publish the variants to a `kernelhub serve` on loopback; the example
#      on the CUDA tvm-ffi variant (correctness, us/call); kernels 0.19.1 on both CUDA variants (the
#      same results, bit for bit: tests/python/test_tvm_ffi_variant.py) and the op time of each
#      (CUDA graph replay and eager); `kernelhub get` in a new process, cold and warm, torch path
#      against tvm-ffi path.
# Carry the wheels the image lacks (apache-tvm-ffi, kernels 0.19.1, tomlkit, huggingface_hub 2.4.0 and
# its dependencies: bench/tvm_ffi/NOTES.md says how) in the folder named by
# KERNELHUB_WHEELS (default .whl). Writes tvm_ffi.csv, tvm_ffi_bench.txt and the build log to $OUT.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
out="${OUT:-/tmp/out}"
mkdir -p "$out"
build=build-gpu
source bench/device_sysroot.sh
wheels="${KERNELHUB_WHEELS:-.whl}"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site-tvm \
  "$wheels"/*.whl || exit 1
export PYTHONPATH="/tmp/site-tvm${PYTHONPATH:+:$PYTHONPATH}"
python3 -c 'import tvm_ffi, kernels, torch; print("tvm_ffi", tvm_ffi.__version__, "kernels", kernels.__version__, "torch", torch.__version__)'
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader

start=$(date +%s)
cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE="$(command -v python3)" \
  -DBUILD_TESTING=OFF -DKERNELHUB_DEVELOPER=OFF -DKERNELHUB_BUILD_PYTHON=OFF -DCMAKE_PREFIX_PATH="$sysroot/usr" \
  -DKERNELHUB_KERNEL_ARCHS=9.0 -DTORCH_CUDA_ARCH_LIST=9.0 >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
cmake --build $build -j "$(nproc)" --target kernelhub kernelhub-get reference_kernels tvm_ffi_rms_norm \
  >>"$out/build.log" 2>&1 || { grep -E "error|FAILED" -A5 "$out/build.log" | head -60; exit 1; }
echo "build: $(( $(date +%s) - start )) s"
ls $build/kernels/build/

python3 bench/gpu/tvm_ffi_bench.py --build-dir "$root/$build" --out "$out" 2>&1 | tee "$out/tvm_ffi_bench.txt"
