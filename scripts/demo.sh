#!/usr/bin/env bash
# make demo: publish the reference kernels to a local Hub (`kernelhub serve` on ./.hub) with
# hub-publish, then get them back through the Hub path into a plain C++ program and call rms_norm.
set -euo pipefail
build="${1:-build}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
repo=kernelhub/reference-kernels
hub="$root/.hub"
mkdir -p "$hub"
token="hf_kernelhub_demo_$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
printf '{"tokens": {"%s": {"user": "demo", "orgs": ["kernelhub"], "write": true}}}\n' "$token" >"$hub/tokens.json"

echo "== kernelhub env"
# The torch the demo's kernels are built for is the project environment's; the CLI reads it from
# its files (no import) through VIRTUAL_ENV, as in an activated environment.
VIRTUAL_ENV="${VIRTUAL_ENV:-$root/.venv}" "$build/bin/kernelhub" env
echo
echo "== kernelhub serve --root .hub"
"$build/bin/kernelhub" serve --root "$hub/store" --tokens "$hub/tokens.json" --port 0 \
  --trusted-publisher kernelhub >"$hub/serve.out" 2>"$hub/serve.log" &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null || true' EXIT
for _ in $(seq 50); do grep -q 'listening on' "$hub/serve.out" 2>/dev/null && break; sleep 0.1; done
endpoint="$(grep -o 'http://[^ ]*' "$hub/serve.out" | head -1)"
echo "listening on $endpoint"
export HF_ENDPOINT="$endpoint" HF_HUB_DISABLE_XET=1 HF_HOME="$hub/hf-home"
rm -rf "$HF_HOME"  # a cold cache, so the demo shows a real download

echo
echo "== hub-publish $repo --build-dir $build/kernels/build --version 1"
echo "   (check every variant, send the binaries through LFS, one commit on branch v1)"
HF_TOKEN="$token" "$build/bin/hub-publish" "$repo" --build-dir "$build/kernels/build" --version 1 --create
echo
echo "== again: identical content makes no new commit"
HF_TOKEN="$token" "$build/bin/hub-publish" "$repo" --build-dir "$build/kernels/build" --version 1 | tail -3

echo
echo "== kernelhub get $repo --version 1   (cold cache: resolve, list, download, verify, load)"
"$build/bin/kernelhub" get "$repo" --version 1
echo
echo "== again, warm"
"$build/bin/kernelhub" get "$repo" --version 1 | tail -1
echo
echo "== examples/rms_norm_example.cpp: a plain C++ program (no Python) calling the kernel"
"$build/bin/rms_norm_example" "$repo"
