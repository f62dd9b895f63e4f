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
# The shim's tests (test_shim_*.py) run from the installed wheel (scripts/test_wheel.sh), except in a
# sanitizer build, which has no Python binding (they skip there).
# The aarch64 tests run in the aarch64 step below, against the aarch64 build.
wheel=yes ignore=(--ignore-glob='*/test_shim_*.py' --ignore-glob='*/test_aarch64_*.py')
if grep -q '^KERNELHUB_SANITIZE:STRING=.' "$build/CMakeCache.txt"; then wheel= ignore=(); fi
echo "== pytest"
# PYTHONPATH: the kernelhub Python package as the build assembles it (<build>/python/kernelhub).
# PYTHONSAFEPATH: the checkout is not on sys.path, where its C++ folder sigstore/ would read as a
# namespace package `sigstore` that the kernels package takes for sigstore-python.
KERNELHUB_BUILD_DIR="$root/$build" PYTHONPATH="$root/$build/python${PYTHONPATH:+:$PYTHONPATH}" PYTHONSAFEPATH=1 \
  .venv/bin/python -m pytest tests/python -q -p no:cacheprovider "${ignore[@]}" || status=1
if [ -n "$wheel" ]; then
  echo
  echo "== wheel: pip wheel ./python, auditwheel, pip install --target, the shim's tests from that install"
  start=$SECONDS
  scripts/test_wheel.sh "$build" || status=1
  echo "== wheel step: $((SECONDS - start)) s"
  # aarch64-linux (scripts/aarch64.sh test): cross-built here (ccache keeps a rebuild short), its
  # suites under qemu, end to end against this build's server, the aarch64 release artifacts.
  # KERNELHUB_TEST_AARCH64=0 leaves it out (a quick local run; CI runs it).
  if [ "${KERNELHUB_TEST_AARCH64:-1}" != 0 ]; then
    echo
    echo "== aarch64: cross build, its suites under qemu, end to end, the aarch64 tarball and wheel"
    start=$SECONDS
    KERNELHUB_BUILD_DIR="$root/$build" scripts/aarch64.sh test || status=1
    echo "== aarch64 step: $((SECONDS - start)) s"
  fi
fi
exit $status
