#!/usr/bin/env bash
# The end-to-end numbers in one command on the H200: build the CUDA variant of kernels/, then
# bench_e2e.py (LTX-Video block first, then Qwen3-8B prefill and decode), each part under its own
# time limit so a slow compile cannot eat the whole call; e2e.csv grows row by row in $OUT.
#
#   bash bench/e2e/run_on_device.sh [PARTS] [SECONDS_PER_PART]     (device run, carry [".whl"])
#
# $E2E_ARGS goes to bench_e2e.py as well (e.g. E2E_ARGS="--configs compile,compile+ours").
# Wheels in .whl/ (kernels 0.17.2, tomlkit, diffusers; see bench/gpu/perf_on_device.sh for how to
# get them) are unpacked into /tmp/site: the image has transformers but neither kernels nor diffusers.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
parts="${1:-prefill,ltx,decode}"
per_part="${2:-200}"  # seconds, or per part: prefill=230,ltx=100,decode=140
out="${OUT:-/tmp/out}"
mkdir -p "$out"
py=$(command -v python3)
$py -c 'import sys, zipfile; [zipfile.ZipFile(w).extractall("/tmp/site") for w in sys.argv[1:]]' \
  .whl/kernels-*.whl .whl/tomlkit-*.whl .whl/diffusers-*.whl && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
(cd /tmp && $py -c 'import kernels, diffusers, transformers, torch; print("kernels", kernels.__version__, "diffusers",
  diffusers.__version__, "transformers", transformers.__version__, "torch", torch.__version__)')

start=$(date +%s)
# The distribution's g++, so the kernel shares torch's libstdc++ (bench/gpu/perf_on_device.sh).
env CXX=/usr/bin/g++ CC=/usr/bin/gcc CUDAHOSTCXX=/usr/bin/g++ cmake -S kernels -B /tmp/kb-ours -G Ninja \
  -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE="$py" -DCMAKE_CUDA_HOST_COMPILER=/usr/bin/g++ \
  -DKERNELHUB_KERNEL_ARCHS=9.0 >"$out/build.log" 2>&1 &&
  cmake --build /tmp/kb-ours -j "$(nproc)" --target reference_kernels >>"$out/build.log" 2>&1 ||
  { grep -E "error|FAILED" -A5 "$out/build.log" | head -40; exit 1; }
echo "built in $(($(date +%s) - start)) s: $(ls /tmp/kb-ours/kernels/build)"

IFS=, read -ra list <<<"$parts"
for part in "${list[@]}"; do
  limit="$per_part"
  if [[ "$per_part" == *=* ]]; then limit="$(tr , '\n' <<<"$per_part" | sed -n "s/^$part=//p")"; fi
  echo "== $part (at most ${limit:=200} s)"
  (cd /tmp && timeout "$limit" $py "$OLDPWD/bench/e2e/bench_e2e.py" --kernels /tmp/kb-ours/kernels --out "$out" \
    --parts "$part" ${E2E_ARGS:-}) 2>&1 | grep -vE "registered at|fallthrough|^  warnings.warn" | tail -40
done
echo "total $(($(date +%s) - start)) s"
cat "$out/e2e.csv"
