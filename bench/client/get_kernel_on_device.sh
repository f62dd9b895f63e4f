#!/usr/bin/env bash
# On the GPU machine: what one get_kernel of a cached CUDA variant costs there, before and after a
# change, side by side in one run. Builds this tree ("new") and a git archive of an earlier commit
# ("old", carried as .old/src.tar.gz: `mkdir -p .old && git archive <commit> | gzip > .old/src.tar.gz`)
# for sm_90, serves the new build's reference kernels (CPU + CUDA variants) with `kernelhub serve`
# on loopback, then for each build, into its own empty cache and state directory:
#   cold      `kernelhub get --version 1 --json` (downloads, verifies, loads)
#   warm      the same in 5 new processes (after one that stamps the files: see verification_stamps.hpp)
#   repeated  20 calls in one process (get_kernel_bench)
#   probe     (new only) get_kernel in a process where torch already initialised CUDA: forks no
#             probe child (children_cpu_ms 0), against one where it did not
# Prints and writes $OUT/get-kernel-device.md and .json. Carry: [".debs", ".old"].
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
out="${OUT:-/tmp/out}"
mkdir -p "$out"
work=/tmp/gk
mkdir -p "$work"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -c 'import torch; print("torch", torch.__version__)'
source bench/device_sysroot.sh

configure() {  # configure <src> <build>
  cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE="$(command -v python3)" \
    -DBUILD_TESTING=OFF -DKERNELHUB_BUILD_PYTHON=OFF -DKERNELHUB_DEVELOPER=OFF -DCMAKE_PREFIX_PATH="$sysroot/usr" \
    -DKERNELHUB_KERNEL_ARCHS=9.0 -DTORCH_CUDA_ARCH_LIST=9.0 >"$work/configure-$(basename "$2").log" 2>&1 ||
    { tail -30 "$work/configure-$(basename "$2").log"; exit 1; }
}
configure . "$work/new"
cmake --build "$work/new" -j "$(nproc)" --target kernelhub hub-publish get_kernel_bench reference_kernels \
  >"$work/build-new.log" 2>&1 || { grep -E "error|FAILED" -A5 "$work/build-new.log" | head -40; exit 1; }
mkdir -p "$work/old-src" && tar -xzf .old/src.tar.gz -C "$work/old-src"
configure "$work/old-src" "$work/old"
cmake --build "$work/old" -j "$(nproc)" --target kernelhub get_kernel_bench \
  >"$work/build-old.log" 2>&1 || { grep -E "error|FAILED" -A5 "$work/build-old.log" | head -40; exit 1; }
ls "$work/new/kernels/build"

token=hf_device_bench
printf '{"tokens": {"%s": {"user": "bench", "orgs": ["acme"], "write": true}}, "organizations": {"acme": {"trustedKernelPublisher": true}}}' \
  "$token" >"$work/tokens.json"
"$work/new/bin/kernelhub" serve --root "$work/hub" --port 0 --tokens "$work/tokens.json" --log-requests \
  >"$work/serve.out" 2>"$work/serve.log" &
for _ in $(seq 50); do grep -q "listening on" "$work/serve.out" && break; sleep 0.2; done
url=$(grep -o 'listening on [^ ]*' "$work/serve.out" | cut -d' ' -f3)
HF_TOKEN=$token "$work/new/bin/hub-publish" acme/reference-kernels --build-dir "$work/new/kernels/build" \
  --version 1 --create --endpoint "$url" >"$work/publish.log" 2>&1 || { tail -20 "$work/publish.log"; exit 1; }

requests() { grep -c . "$work/serve.log"; }
run() {  # run <impl> <name> <command...>: one JSON line per result into $work/results.jsonl
  local impl=$1 name=$2
  shift 2
  local before after
  before=$(requests)
  "$@" >"$work/last.out" 2>"$work/last.err" || { echo "$impl $name failed: $(tail -3 "$work/last.err")"; return; }
  after=$(requests)
  python3 - "$impl" "$name" "$((after - before))" "$work/last.out" >>"$work/results.jsonl" <<'PY'
import json, sys
impl, name, requests, path = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
text = open(path).read().strip()
docs = [json.loads(line) for line in text.splitlines() if line.startswith("{")] if text.startswith("{\"call\"") else [json.loads(text)]
print(json.dumps({"impl": impl, "name": name, "requests": requests, "results": docs}))
PY
}
for impl in old new; do
  export HF_ENDPOINT="$url" HF_HUB_CACHE="$work/cache-$impl" KERNELHUB_STATE_DIR="$work/state-$impl" HF_HUB_DISABLE_XET=1
  unset HF_TOKEN
  run $impl cold "$work/$impl/bin/kernelhub" get acme/reference-kernels --version 1 --json
  sleep 2.2
  run $impl stamp "$work/$impl/bin/kernelhub" get acme/reference-kernels --version 1 --json
  for i in 1 2 3 4 5; do run $impl warm "$work/$impl/bin/kernelhub" get acme/reference-kernels --version 1 --json; done
  run $impl repeated "$work/$impl/bin/get_kernel_bench" acme/reference-kernels --version 1 --repeat 21
done
run new probe-fresh "$work/new/bin/get_kernel_bench" acme/reference-kernels --version 1 --repeat 1
run new probe-torch-cuda "$work/new/bin/get_kernel_bench" acme/reference-kernels --version 1 --repeat 1 --init-cuda 1
kill %1 2>/dev/null

python3 - "$work/results.jsonl" "$out" <<'PY'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
out = sys.argv[2]
json.dump(rows, open(f"{out}/get-kernel-device.json", "w"), indent=1)
def pick(impl, name):
    return [r for r in rows if r["impl"] == impl and r["name"] == name]
lines = ["| measure | old | new |", "|---|---|---|"]
for name in ("cold", "warm"):
    cells = []
    for impl in ("old", "new"):
        rs = pick(impl, name)
        total = statistics.median(r["results"][0]["seconds"]["total"] * 1e3 for r in rs)
        hashed = statistics.median(r["results"][0]["bytes_hashed"] for r in rs)
        req = statistics.median(r["requests"] for r in rs)
        cells.append(f"{total:.0f} ms, {hashed / 1e6:.1f} MB hashed, {req:.0f} requests")
    lines.append(f"| `kernelhub get` {name} (median of {len(pick('new', name))}) | {cells[0]} | {cells[1]} |")
cells = []
for impl in ("old", "new"):
    r = pick(impl, "repeated")[0]
    calls = r["results"][1:]
    cells.append(f"{statistics.median(c['wall_ms'] for c in calls):.3f} ms, "
                 f"{statistics.median(c['bytes_hashed'] for c in calls) / 1e6:.1f} MB hashed, "
                 f"{(r['requests'] - 0) / len(r['results']):.1f} requests a call")
lines.append(f"| get_kernel repeated in-process (median of 20) | {cells[0]} | {cells[1]} |")
for name in ("probe-fresh", "probe-torch-cuda"):
    for r in pick("new", name):
        c = r["results"][0]
        lines.append(f"| new, {name}: first get_kernel | | {c['wall_ms']:.0f} ms, children's CPU {c['children_cpu_ms']:.0f} ms, {c['variant']} |")
text = "\n".join(lines)
print(text)
open(f"{out}/get-kernel-device.md", "w").write(text + "\n")
PY
