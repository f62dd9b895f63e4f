#!/usr/bin/env bash
# Load benchmark for `kernelhub serve` on loopback: not a test.
#
#   bench/server/run_bench.sh [--size-mb 1024] [--duration 10]
#
# 1. /resolve of a small file, 64 connections (goal: >= 5000 req/s, p99 < 50 ms). wrk 4.1 cannot
#    time HEAD requests (its parser waits for the Content-Length body a HEAD answer announces
#    but never sends, so every connection stalls until the keep-alive timeout), so this is a GET
#    of a 15-byte file: the same lookup and headers as the HEAD, plus a pread and 15 bytes.
# 2. GET of a 1 GB LFS blob from the storage route (goal: >= 1 GB/s), while sampling the
#    server's RSS to show memory stays flat (no whole-file buffering).
# Uses KERNELHUB_BUILD_DIR (default ./build) for bin/kernelhub; prints a Markdown summary.
set -euo pipefail

SIZE_MB=1024
DURATION=10
while [[ $# -gt 0 ]]; do
  case "$1" in
    --size-mb) SIZE_MB="$2"; shift 2 ;;
    --duration) DURATION="$2"; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done

HERE="$(cd "$(dirname "$0")" && pwd)"
BUILD_DIR="${KERNELHUB_BUILD_DIR:-$HERE/../../build}"
BIN="$BUILD_DIR/bin/kernelhub"
[[ -x "$BIN" ]] || { echo "no $BIN; build the kernelhub target first" >&2; exit 1; }
command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install wrk)" >&2; exit 1; }

WORK="$(mktemp -d /tmp/kh-bench.XXXXXX)"
SERVER_PID=""
cleanup() {
  [[ -n "$SERVER_PID" ]] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

TOKEN=hf_bench_write
echo "{\"tokens\": {\"$TOKEN\": {\"user\": \"bench\", \"orgs\": [\"acme\"], \"write\": true}}}" > "$WORK/tokens.json"
"$BIN" serve --root "$WORK/root" --port 0 --tokens "$WORK/tokens.json" --threads 64 > "$WORK/serve.out" 2> "$WORK/serve.err" &
SERVER_PID=$!
for _ in $(seq 50); do grep -q HF_ENDPOINT "$WORK/serve.out" 2>/dev/null && break; sleep 0.1; done
URL="$(grep HF_ENDPOINT "$WORK/serve.out" | cut -d= -f2)"
AUTH=(-H "Authorization: Bearer $TOKEN")

curl -sf "${AUTH[@]}" -X POST "$URL/api/repos/create" -d '{"name": "bench", "organization": "acme", "type": "kernel"}' >/dev/null
printf '{"key":"header","value":{"summary":"small"}}\n{"key":"file","value":{"path":"build/torch-cpu/metadata.json","content":"%s","encoding":"base64"}}\n' \
  "$(printf '{"version": 1}\n' | base64 -w0)" > "$WORK/commit.ndjson"
curl -sf "${AUTH[@]}" -H 'Content-Type: application/x-ndjson' --data-binary @"$WORK/commit.ndjson" \
  "$URL/api/kernels/acme/bench/commit/main" >/dev/null

# The big blob: upload through the LFS batch API exactly as a client would.
head -c $((SIZE_MB * 1024 * 1024)) /dev/urandom > "$WORK/big.bin"
OID="$(sha256sum "$WORK/big.bin" | cut -d' ' -f1)"
SIZE="$(stat -c %s "$WORK/big.bin")"
BATCH="$(curl -sf "${AUTH[@]}" -H 'Content-Type: application/vnd.git-lfs+json' \
  -d "{\"operation\":\"upload\",\"transfers\":[\"basic\"],\"objects\":[{\"oid\":\"$OID\",\"size\":$SIZE}]}" \
  "$URL/kernels/acme/bench.git/info/lfs/objects/batch")"
UPLOAD="$(python3 -c 'import json,sys; print(json.load(sys.stdin)["objects"][0]["actions"]["upload"]["href"])' <<<"$BATCH")"
UP_START=$(date +%s.%N)
curl -sf -T "$WORK/big.bin" "$UPLOAD" >/dev/null
UP_END=$(date +%s.%N)
printf '{"key":"header","value":{"summary":"big"}}\n{"key":"lfsFile","value":{"path":"build/torch-cpu/big.bin","algo":"sha256","oid":"%s","size":%s}}\n' \
  "$OID" "$SIZE" > "$WORK/commit2.ndjson"
curl -sf "${AUTH[@]}" -H 'Content-Type: application/x-ndjson' --data-binary @"$WORK/commit2.ndjson" \
  "$URL/api/kernels/acme/bench/commit/main" >/dev/null
rm -f "$WORK/big.bin"
STORAGE="$(curl -sI "$URL/kernels/acme/bench/resolve/main/build/torch-cpu/big.bin" | tr -d '\r' | awk -F': ' 'tolower($1)=="location"{print $2}')"

rss_kb() { awk '/VmRSS/{print $2}' "/proc/$SERVER_PID/status"; }

echo "## kernelhub serve load benchmark"
echo
echo "- host: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), loopback, $(date -u +%Y-%m-%dT%H:%MZ)"
echo "- LFS upload of ${SIZE_MB} MiB (one PUT, hashed while streaming, fsync, rename): $(python3 -c "print(f'{$SIZE/($UP_END-$UP_START)/1e9:.2f} GB/s')")"
echo
echo "### GET /resolve of a 15-byte file (stands in for HEAD, see above), 64 connections, ${DURATION}s"
echo '```'
wrk -t2 -c64 -d"${DURATION}s" --latency -H 'Accept-Encoding: identity' "$URL/kernels/acme/bench/resolve/main/build/torch-cpu/metadata.json" | sed -n '1,30p'
echo '```'
echo
echo "### GET of the ${SIZE_MB} MiB LFS blob from the storage route, 2 connections, ${DURATION}s"
RSS_BEFORE=$(rss_kb)
( while kill -0 $SERVER_PID 2>/dev/null; do rss_kb >> "$WORK/rss.txt"; sleep 0.2; done ) &
SAMPLER=$!
echo '```'
wrk -t2 -c2 -d"${DURATION}s" --timeout 60s -H 'Accept-Encoding: identity' "$STORAGE" | sed -n '1,30p'
echo '```'
kill $SAMPLER 2>/dev/null || true
echo
echo "- server RSS before streaming: ${RSS_BEFORE} KiB; during streaming: min $(sort -n "$WORK/rss.txt" | head -1) KiB, max $(sort -n "$WORK/rss.txt" | tail -1) KiB ($(wc -l < "$WORK/rss.txt") samples)"
