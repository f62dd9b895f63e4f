#!/usr/bin/env bash
# Packs the fuzzers built in build-fuzz/ (make fuzz), the shared libraries they need beyond glibc,
# and the minimised corpora into .fuzzpack/pack.tar.gz, for fuzz/run_on_device.sh on the GPU
# machine's CPU cores (which has no clang). The debug info is stripped (symbols stay, so reports
# still name functions): the carry limit is 64 MiB.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
fuzz_dir="${FUZZ_DIR:-build-fuzz}"
stage=.fuzzpack/stage
rm -rf "$stage" && mkdir -p "$stage/bin" "$stage/lib" "$stage/corpus"
for bin in "$fuzz_dir"/*_fuzzer; do
  strip --strip-debug -o "$stage/bin/$(basename "$bin")" "$bin"
done
ldd "$fuzz_dir"/*_fuzzer | awk '$3 ~ /^\// {print $3}' | sort -u | grep -vE '/(libc|libm|libdl|librt|libpthread|ld-linux[^/]*)\.so' |
  xargs -I{} cp -L {} "$stage/lib/"
# Minimise each target's corpus (what it grew plus the seeds) to the inputs that keep its coverage.
for bin in "$stage"/bin/*_fuzzer; do
  name="$(basename "$bin" _fuzzer)"
  mkdir -p "$stage/corpus/$name" "$fuzz_dir/corpus/$name"
  # (A fuzzer running on the same corpus meanwhile can make the merge fail: then take the seeds.)
  "$fuzz_dir/${name}_fuzzer" -merge=1 -timeout=10 -rss_limit_mb=2048 "$stage/corpus/$name" \
    "$fuzz_dir/corpus/$name" "fuzz/corpus/$name" >/dev/null 2>&1 ||
    { echo "merging the $name corpus failed; packing its seeds" >&2 && cp "fuzz/corpus/$name"/* "$stage/corpus/$name/"; }
done
tar -C "$stage" -czf .fuzzpack/pack.tar.gz bin lib corpus
rm -rf "$stage"
du -h .fuzzpack/pack.tar.gz
