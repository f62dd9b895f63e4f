#!/usr/bin/env bash
# AdaLN before and after a change, in one call on the H200: the standalone probe of the kernels at
# batched video shapes (adaln_shapes_probe.cu), then perf_on_device.sh with a baseline: both builds,
# the AdaLN correctness tests on CUDA tensors, every AdaLN shape of the sweep and the batched shapes
# timed in turns (v0 = the baseline, ours = this tree), and a table of both against the copy.
#
#   bash bench/gpu/adaln_perf_on_device.sh BASELINE_SRC [PROBE]
#
# BASELINE_SRC holds an older checkout's kernels/ and cmake/ (`git archive REV kernels cmake`).
# PROBE: adaln_shapes_probe built elsewhere (its header says how; it links nothing of torch), else it
# is built here first. The builds run at the lowest priority while the probe times the GPU, so that
# its host thread stays ahead of the GPU. Wheels for the correctness step (kernels, tomlkit) in .whl/.
# Everything lands in $OUT: probe.csv/.txt, perf.txt, bench.csv (batched shapes), bench-spot.csv (the
# sweep's AdaLN shapes), correctness.txt.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
out="${OUT:-/tmp/out}"
mkdir -p "$out"
baseline="$1" probe="${2:-}"
spot="adaln:2x5000x2560,adaln:4x4321x3072,adaln:1x10000x2560,adaln:2x7392x2048,adaln:2x7392x4096"
if [ -z "$probe" ]; then
  probe=/tmp/adaln_shapes_probe
  t=$(python3 -c 'import torch, os; print(os.path.dirname(torch.__file__))')/include
  nvcc -O3 -std=c++20 -arch=sm_90 --expt-relaxed-constexpr -isystem "$t" -isystem "$t/torch/csrc/api/include" \
    -I kernels/torch-ext -o "$probe" bench/gpu/adaln_shapes_probe.cu || exit 1
fi
start=$(date +%s)
# The batched shapes first (bench.csv), then the sweep's AdaLN shapes (bench-spot.csv).
BENCH_SPOT_ARGS="--ops adaln --peers none --timing graph --interleave --repeat 2 --check" \
  nice -n 19 bash bench/gpu/perf_on_device.sh --baseline "$baseline" --correctness-k adaln -- \
  --ops adaln --shapes "$spot" --peers none --timing graph --interleave --repeat 3 --check >"$out/perf.txt" 2>&1 &
perf=$!
echo "== probe (the builds compile meanwhile)"
"$probe" 100 >"$out/probe.csv" 2>"$out/probe.txt"
echo "probe: exit $? after $(($(date +%s) - start)) s"
wait $perf
echo "perf_on_device: exit $? after $(($(date +%s) - start)) s"
grep -E "built in|correctness:|passed|failed|error" "$out/perf.txt" | head -20
python3 - "$out" <<'EOF'
import csv, sys
from pathlib import Path
out = Path(sys.argv[1])
rows = []
for name in ("bench.csv", "bench-spot.csv"):
    if (out / name).exists():
        rows += list(csv.DictReader(open(out / name)))
shapes = {}
for r in rows:
    shapes.setdefault((int(r.get("batch") or 1), int(r["tokens"]), int(r["hidden"])), {})[r["impl"]] = r
print(f"{'B x S x H':>16} {'v0 us':>8} {'ours us':>8} {'ours/v0':>7} {'copy us':>8} {'v0 frac':>7} {'ours frac':>9} err")
for (b, t, h), impl in sorted(shapes.items(), key=lambda kv: (kv[0][2], kv[0][1] * kv[0][0])):
    v0, ours = impl.get("v0"), impl.get("ours")
    if not v0 or not ours or not v0["median_us"] or not ours["median_us"]:
        continue
    a, c = float(v0["median_us"]), float(ours["median_us"])
    print(f"{b:>3} x{t:>6} x{h:>5} {a:8.2f} {c:8.2f} {c / a:7.3f} {float(ours['copy_us']):8.2f} "
          f"{float(v0['frac_of_copy']):7.3f} {float(ours['frac_of_copy']):9.3f} {ours['rel_err']}")
EOF
tail -40 "$out/probe.txt"
