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
sysroot=/tmp/sysroot
mkdir -p "$sysroot"
for f in .debs/*.deb; do dpkg -x "$f" "$sysroot"; done
lib="$sysroot/usr/lib/x86_64-linux-gnu"
rm -f "$lib"/*.a "$lib"/libcurl.so.4* "$lib"/libssl.so.3 "$lib"/libcrypto.so.3  # the image's are used
for l in libcurl libssl libcrypto; do  # headers from the .debs, these libraries from the image
  so=$(ls /usr/lib/x86_64-linux-gnu/$l.so.* 2>/dev/null | head -1)
  [ -n "$so" ] && ln -sf "$so" "$lib/$l.so"
done
export PKG_CONFIG_PATH="$lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$sysroot"
# At run time only libcpp-httplib and libbrotli come from the .debs; everything else is the image's.
mkdir -p /tmp/httplib-runtime
for so in "$lib"/libcpp-httplib.so.0* "$lib"/libbrotli*.so.1*; do ln -sf "$so" /tmp/httplib-runtime/; done
export LD_LIBRARY_PATH="/tmp/httplib-runtime:${LD_LIBRARY_PATH:-}"
command -v pkg-config >/dev/null || export PATH="$sysroot/usr/bin:$PATH"

cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE="$(command -v python3)" \
  -DCMAKE_CXX_COMPILER=/usr/bin/g++ -DCMAKE_C_COMPILER=/usr/bin/gcc -DBUILD_TESTING=OFF \
  -DKERNELHUB_BUILD_KERNELS=OFF -DKERNELHUB_BUILD_PYTHON=OFF -DKERNELHUB_DEVELOPER=OFF \
  -DCMAKE_PREFIX_PATH="$sysroot/usr" >"$out/client-configure.log" 2>&1 || { tail -30 "$out/client-configure.log"; exit 1; }
time cmake --build $build -j "$(nproc)" --target kernelhub hub-publish >"$out/client-build.log" 2>&1 ||
  { grep -E "error|FAILED" -A5 "$out/client-build.log" | head -40; exit 1; }
KERNELHUB_BUILD_DIR="$root/$build" python3 bench/client/bench_client.py --mb "$mb" --files 8 --runs "$runs" |
  tee "$out/client-bench.md"
