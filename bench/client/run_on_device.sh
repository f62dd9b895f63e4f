#!/usr/bin/env bash
# The client benchmark (bench_client.py) on a machine with spare cores: the GPU machine (16
# cores), where the server, curl and our client's hashing threads need not share two cores.
# Usage there: bash bench/client/run_on_device.sh [MB] [RUNS]. Debian packages the image lacks
# (OpenSSL, curl and cpp-httplib headers, pkg-config) travel in .debs/ and are unpacked into
# /tmp/sysroot, never into /. Output: $OUT/client-bench.md.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
out="${OUT:-/tmp/out}"
mkdir -p "$out"
mb="${1:-200}"
runs="${2:-5}"
build=build-client-bench

echo "== machine: $(nproc) cores; curl: $(command -v curl); pkg-config: $(command -v pkg-config)"
python3 -c 'import huggingface_hub, torch; print("huggingface_hub", huggingface_hub.__version__, "torch", torch.__version__)'
source bench/device_sysroot.sh

cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE="$(command -v python3)" \
  -DCMAKE_CXX_COMPILER=/usr/bin/g++ -DCMAKE_C_COMPILER=/usr/bin/gcc -DBUILD_TESTING=OFF \
  -DKERNELHUB_BUILD_KERNELS=OFF -DKERNELHUB_BUILD_PYTHON=OFF -DKERNELHUB_DEVELOPER=OFF \
  -DCMAKE_PREFIX_PATH="$sysroot/usr" >"$out/client-configure.log" 2>&1 || { tail -30 "$out/client-configure.log"; exit 1; }
time cmake --build $build -j "$(nproc)" --target kernelhub hub-publish >"$out/client-build.log" 2>&1 ||
  { grep -E "error|FAILED" -A5 "$out/client-build.log" | head -40; exit 1; }
KERNELHUB_BUILD_DIR="$root/$build" python3 bench/client/bench_client.py --mb "$mb" --files 8 --runs "$runs" |
  tee "$out/client-bench.md"
