#!/usr/bin/env bash
# make test: every test: Catch2 through ctest, then pytest. Both run even if the first fails;
# the exit status is non-zero if either did.
set -uo pipefail
build="${1:-build}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

# Under `make test SAN=1`: LibTorch keeps allocations alive until exit on purpose, so leak
# reports would be noise; every other ASan/UBSan finding fails the test.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}" UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}"
status=0
echo "== ctest ($build)"
ctest --test-dir "$build" --output-on-failure --timeout 600 -j "$(nproc)" || status=1
echo
echo "== pytest"
# PYTHONPATH: the kernelhub Python package as the build assembles it (<build>/python/kernelhub).
KERNELHUB_BUILD_DIR="$root/$build" PYTHONPATH="$root/$build/python${PYTHONPATH:+:$PYTHONPATH}" \
  .venv/bin/python -m pytest tests/python -q -p no:cacheprovider || status=1
exit $status
