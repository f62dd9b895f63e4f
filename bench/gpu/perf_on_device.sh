#!/usr/bin/env bash
# The kernel benchmarks in one command on the H200: build the CUDA variant of kernels/ (and of a baseline copy,
# when one is given), run the GPU correctness suite, then time every op and peer (bench_ops.py).
#
#   bash bench/gpu/perf_on_device.sh [--baseline SRC] [--alt-flags FLAGS]... [--no-correctness | --correctness-k EXPR]
#                                    [--] [bench_ops.py args...]
#
# --alt-flags builds the same sources again with CMAKE_CUDA_FLAGS=FLAGS (e.g. -DKH_ROW_MAX_PACKS=8)
# and times it as impl "alt" (then "alt2", ...: the option repeats) in the same process as ours, shape
# by shape (the flags are part of the op namespace's hash, so the builds load side by side: a
# comparison across processes moved AdaLN by 12% with identical code, bench/gpu/NOTES.md, "Timing").
# With $BENCH_ALT_ARGS set, each alt runs instead in its own process with those arguments, into
# bench-alt.csv, bench-alt2.csv, .... Every build is for sm_90 alone (KERNELHUB_KERNEL_ARCHS=9.0: a
# quarter of the compile time). $BENCH_SPOT_ARGS, when set, runs a
# third sweep (ours and the peers, e.g. fp16/fp32 spot checks) into bench-spot.csv.
# --correctness-k EXPR runs only the correctness tests that pytest's -k EXPR selects.
# SRC is a copy of an older checkout's kernels/ and cmake/ folders (SRC/kernels, SRC/cmake), e.g.
# `git archive HEAD kernels cmake | tar -x -C .perf-v0`; it is timed as impl "v0". Wheels in .whl/
# (Liger-Kernel; `kernels` and tomlkit where the image lacks them) are unpacked into /tmp/site. Get
# them here first (.whl/ and .perf-v0/ listed in .git/info/exclude, then named in the run's carry):
#   pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#     --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 -d .whl \
#     liger-kernel==0.8.5 kernels==0.17.2 tomlkit
# Everything lands in $OUT (default /tmp/out): build logs, correctness.txt, bench.csv, bench.txt.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
out="${OUT:-/tmp/out}"
mkdir -p "$out"
baseline="" correctness=1 alt_flags=() correctness_k=()
while [ $# -gt 0 ]; do
  case "$1" in
    --baseline) baseline="$2"; shift 2 ;;
    --no-correctness) correctness=0; shift ;;
    --correctness-k) correctness_k=(-- -k "$2"); shift 2 ;;
    --alt-flags) alt_flags+=("$2"); shift 2 ;;
    --) shift; break ;;
    *) break ;;
  esac
done
py=$(command -v python3)
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv,noheader
$py -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__, "python", __import__("sys").version.split()[0])'

if ls .whl/*.whl >/dev/null 2>&1; then
  wheels=()  # Liger only where its wheel came (the AdaLN-only runs time no peers)
  compgen -G ".whl/liger_kernel-*.whl" >/dev/null && wheels+=(.whl/liger_kernel-*.whl)
  # (from /tmp: in the repository root, `import kernels` finds the kernels/ source folder)
  (cd /tmp && $py -c 'import kernels') 2>/dev/null || wheels+=(.whl/kernels-*.whl .whl/tomlkit-*.whl)
  # A wheel is a zip of its installed files; the image's venv may have no pip.
  $py -c 'import sys, zipfile; [zipfile.ZipFile(w).extractall("/tmp/site") for w in sys.argv[1:]]' "${wheels[@]}" &&
    export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
  (cd /tmp && $py -c 'import kernels; print("kernels", kernels.__file__)')
fi

# The image's own compiler links libstdc++ statically; the kernel must share torch's (see
# bench/gpu_correctness.py --cxx), so build with the distribution's g++.
build() {  # build SRC_KERNELS_DIR BUILD_DIR JOBS [CUDA_FLAGS]
  local log="$out/build-$(basename "$2").log"
  env CXX=/usr/bin/g++ CC=/usr/bin/gcc CUDAHOSTCXX=/usr/bin/g++ cmake -S "$1" -B "$2" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE="$py" -DCMAKE_CUDA_HOST_COMPILER=/usr/bin/g++ \
    -DKERNELHUB_KERNEL_ARCHS=9.0 "-DCMAKE_CUDA_FLAGS=${4:-}" >"$log" 2>&1 &&
    cmake --build "$2" -j "$3" --target reference_kernels >>"$log" 2>&1
}
start=$(date +%s)
# Each build gets an equal share of the cores.
builds=$((1 + ${#alt_flags[@]} + (${#baseline} > 0 ? 1 : 0)))
jobs=$(( $(nproc) / builds > 0 ? $(nproc) / builds : 1 ))
if [ -n "$baseline" ]; then
  build "$baseline/kernels" /tmp/kb-v0 "$jobs" & v0pid=$!
fi
alt_names=() alt_pids=()
for i in "${!alt_flags[@]}"; do
  name=alt$([ "$i" -gt 0 ] && echo $((i + 1)))
  alt_names+=("$name")
  build kernels "/tmp/kb-$name" "$jobs" "${alt_flags[$i]}" & alt_pids+=($!)
done
build kernels /tmp/kb-ours "$jobs" || { grep -E "error|FAILED" -A5 "$out/build-kb-ours.log" | head -60; exit 1; }
alt_built=()
for i in "${!alt_pids[@]}"; do
  if wait "${alt_pids[$i]}"; then
    alt_built+=("$i")
  else
    echo "${alt_names[$i]} build failed"; grep -E "error|FAILED" -A5 "$out/build-kb-${alt_names[$i]}.log" | head -30
  fi
done
impls=(--impl ours=/tmp/kb-ours/kernels)
if [ -n "$baseline" ]; then
  wait $v0pid && impls+=(--impl v0=/tmp/kb-v0/kernels) || echo "baseline build failed (see $out/build-kb-v0.log)"
fi
if [ -z "${BENCH_ALT_ARGS:-}" ]; then
  for i in "${alt_built[@]}"; do impls+=(--impl "${alt_names[$i]}=/tmp/kb-${alt_names[$i]}/kernels"); done
fi
echo "built in $(( $(date +%s) - start )) s"
# The build directory names kernels/ itself as its root: kernels/ for get_local_kernel.
ls /tmp/kb-ours/kernels/build

if [ "$correctness" = 1 ]; then
  echo "== GPU correctness suite (tests/python/reference_kernels/ on CUDA tensors)"
  timeout 300 $py bench/gpu_correctness.py --build-dir /tmp/kb-ours "${correctness_k[@]}" >"$out/correctness.txt" 2>&1
  echo "correctness: exit $?"; grep -E "passed|failed|error" "$out/correctness.txt" | tail -5
fi
echo "== bench_ops.py"
$py bench/gpu/bench_ops.py "${impls[@]}" --out "$out" "$@" 2>&1 | tee "$out/bench.txt" | grep -v "^  " | tail -400
if [ -n "${BENCH_ALT_ARGS:-}" ]; then
  for i in "${alt_built[@]}"; do
    name=${alt_names[$i]}
    echo "== bench_ops.py, $name build (${alt_flags[$i]})"
    $py bench/gpu/bench_ops.py --impl "$name=/tmp/kb-$name/kernels" --out "$out" --csv-name "bench-$name.csv" \
      $BENCH_ALT_ARGS 2>&1 | tee -a "$out/bench.txt" | grep -v "^  " | tail -100
  done
fi
if [ -n "${BENCH_SPOT_ARGS:-}" ]; then
  echo "== bench_ops.py, spot checks"
  $py bench/gpu/bench_ops.py "${impls[@]}" --out "$out" --csv-name bench-spot.csv $BENCH_SPOT_ARGS 2>&1 |
    tee -a "$out/bench.txt" | grep -v "^  " | tail -100
fi
