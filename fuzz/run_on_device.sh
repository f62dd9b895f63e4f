#!/usr/bin/env bash
# Fuzzing on the GPU machine's CPU cores (16 to 128 of them; the GPU is not used). Every target runs
# at once in libFuzzer's fork mode, with an equal share of the cores, for SECONDS, from the
# minimised corpora that fuzz/pack_for_device.sh packed. Results under $OUT:
#   summary.tsv     target, workers, seconds, CPU-seconds, executions, coverage, corpus, crashes
#   logs.tar.gz     each target's log
#   corpus.tar.gz   the grown corpora, minimised again (unpack over build-fuzz/corpus/ here)
#   crashes.tar.gz  any input that crashed, timed out or ran out of memory (absent when none)
#
# Here:   make fuzz FUZZ_SECONDS=1 && fuzz/pack_for_device.sh
# There:  device run, carry [".fuzzpack"], command: fuzz/run_on_device.sh 480
# FUZZ_WORKERS="commit_body=4,elf=2,..." gives targets their own worker counts (then only the
# targets it names run); by default every target gets an equal share of the cores.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
seconds="${1:-480}"
out="${OUT:-$PWD/fuzz-out}"
work=/tmp/kernelhub-fuzz
rm -rf "$work" && mkdir -p "$work/logs" "$work/crashes" "$work/grown" "$out"
tar -C "$work" -xzf .fuzzpack/pack.tar.gz
export LD_LIBRARY_PATH="$work/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
targets=()
for bin in "$work"/bin/*_fuzzer; do targets+=("$(basename "$bin" _fuzzer)"); done
cores="$(nproc)"
workers=$((cores / ${#targets[@]}))
((workers >= 1)) || workers=1
echo "$(date -u +%FT%TZ) ${#targets[@]} targets on $cores cores, $seconds s${FUZZ_WORKERS:+, workers $FUZZ_WORKERS}"

dict_for() {
  case "$1" in
    elf | fatbin) echo "-dict=fuzz/fatbin.dict" ;;
    lockfile | metadata | repo_tree | commit_body | lfs_batch | hub_answers) echo "-dict=fuzz/json.dict" ;;
  esac
}

declare -A share
for t in "${targets[@]}"; do share[$t]=$workers; done
if [ -n "${FUZZ_WORKERS:-}" ]; then
  share=()
  IFS=, read -ra pairs <<<"$FUZZ_WORKERS"
  for pair in "${pairs[@]}"; do share[${pair%%=*}]=${pair#*=}; done
  targets=("${!share[@]}")
fi

for t in "${targets[@]}"; do
  mkdir -p "$work/grown/$t"
  # Fork mode: the first corpus folder receives what the workers find; crashes do not stop the run.
  "$work/bin/${t}_fuzzer" -fork="${share[$t]}" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$work/crashes/$t-" \
    $(dict_for "$t") "$work/grown/$t" "$work/corpus/$t" "fuzz/corpus/$t" >"$work/logs/$t.log" 2>&1 &
done
wait
echo "$(date -u +%FT%TZ) fuzzing done"

# The last status line of a fork-mode log: "#<execs>: cov: C ft: F corp: N exec/s E oom/timeout/crash: a/b/c time: Ts ..."
printf 'target\tworkers\tseconds\tcpu_seconds\texecs\tcov\tft\tcorpus\toom_timeout_crash\n' >"$out/summary.tsv"
for t in "${targets[@]}"; do
  # Fields are "name: value" pairs after the "#execs:" token (exec/s has no colon).
  grep -E '^#[0-9]+: cov:' "$work/logs/$t.log" | tail -1 | awk -v t="$t" -v w="${share[$t]}" -v s="$seconds" '
    { for (i = 2; i < NF; i++) v[$i] = $(i + 1); execs = substr($1, 2, length($1) - 2) }
    END { printf "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", t, w, s, w * s, execs, v["cov:"], v["ft:"], v["corp:"],
          v["oom/timeout/crash:"] }' >>"$out/summary.tsv"
done
cat "$out/summary.tsv"

# Minimise what grew, in parallel, so the corpora come back small.
mkdir -p "$work/min"
for t in "${targets[@]}"; do
  mkdir -p "$work/min/$t"
  "$work/bin/${t}_fuzzer" -merge=1 -timeout=10 -rss_limit_mb=2048 "$work/min/$t" "$work/corpus/$t" \
    "$work/grown/$t" >"$work/logs/$t-merge.log" 2>&1 &
done
wait
tar -C "$work" -czf "$out/logs.tar.gz" logs
tar -C "$work/min" -czf "$out/corpus.tar.gz" .
if [ -n "$(ls -A "$work/crashes")" ]; then
  tar -C "$work" -czf "$out/crashes.tar.gz" crashes
  echo "CRASHES:" && ls "$work/crashes"
else
  echo "no crashes"
fi
ls -la "$out"
