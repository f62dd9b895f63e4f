#!/usr/bin/env bash
# make test: every test: Catch2 through ctest, then pytest. Both run even if the first fails;
# the exit status is non-zero if either did.
set -uo pipefail
build="${1:-build}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

status=0
echo "== ctest ($build)"
ctest --test-dir "$build" --output-on-failure --timeout 600 -j "$(nproc)" || status=1
echo
echo "== pytest"
KERNELHUB_BUILD_DIR="$root/$build" .venv/bin/python -m pytest tests/python -q -p no:cacheprovider || status=1
exit $status
