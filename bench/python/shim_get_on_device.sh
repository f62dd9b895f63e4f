#!/usr/bin/env bash
# On the GPU machine: the shim's warm first get_kernel and import + first get_kernel against kernels
# 0.19.1 (bench/python/shim_get.py), in processes that initialised CUDA, for the reference kernels'
# CUDA variant (built here for sm_90) and its CPU variant, with the packages our requirements give
# (apache-tvm-ffi, huggingface_hub 2.4) installed. The image has neither kernels 0.19.1 nor
# pybind11: they travel as wheels in .whl/, unpacked into /tmp/site by bench/device_sysroot.sh.
# Here, before the call (.debs/ and .whl/ are git-ignored; name them in the call's carry):
#   bash bench/device_debs.sh
#   pip download --only-binary=:all: --python-version 3.12 --implementation cp \
#     --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
#     -d .whl kernels==0.19.1 huggingface_hub==2.4.0 apache-tvm-ffi==0.1.15.post2 pybind11==3.1.0
# Then: bash bench/python/shim_get_on_device.sh [REPEAT]   (carry [".debs", ".whl"]; about 6 min)
# Writes $OUT/shim-get-cuda.md, $OUT/shim-get-cpu.md and the build log.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
out="${OUT:-/tmp/out}"
repeat="${1:-9}"
mkdir -p "$out"
build=/tmp/shim-get-build
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
source bench/device_sysroot.sh
# (from /tmp: in the repository root, `import kernels` finds the kernels/ source folder)
(cd /tmp && python3 -c 'import sys, torch, kernels, huggingface_hub, tvm_ffi, pybind11
print("python", sys.version.split()[0], "torch", torch.__version__, "kernels", kernels.__version__,
      "huggingface_hub", huggingface_hub.__version__, "tvm_ffi", tvm_ffi.__version__)') || exit 1

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE="$(command -v python3)" \
  -DBUILD_TESTING=OFF -DKERNELHUB_BUILD_PYTHON=ON -DKERNELHUB_DEVELOPER=OFF -DCMAKE_PREFIX_PATH="$sysroot/usr" \
  -DKERNELHUB_KERNEL_ARCHS=9.0 -DTORCH_CUDA_ARCH_LIST=9.0 >"$out/build.log" 2>&1 &&
  cmake --build "$build" -j "$(nproc)" --target kernelhub kernelhub_python_core reference_kernels \
    >>"$out/build.log" 2>&1 || { grep -E "error|FAILED" -A5 "$out/build.log" | head -40; exit 1; }
ls "$build/kernels/build"

# From /tmp, for the same reason as above.
for variant in cuda cpu; do
  echo "== $variant variant"
  (cd /tmp && python3 "$root/bench/python/shim_get.py" --build "$build" --repeat "$repeat" --cuda \
    --variant "$variant" --out "$out/shim-get-$variant.md") || exit 1
done
