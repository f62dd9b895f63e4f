#!/usr/bin/env bash
# Configures and builds kernelhub's torch-facing code (the loader, get_kernel, the Python binding)
# against the LibTorch of other torch releases than the environment's: a torch wheel's headers,
# CMake package and libraries, unpacked from PyPI into the tools cache (no second environment).
#
#   scripts/check_torch_compat.sh [VERSION...]      default: 2.11.0
#
# Each version is built in build-torch<VERSION>/ and reported as `ok` or with the failing step.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
scripts/bootstrap.sh >/dev/null || exit 1
python="$root/.venv/bin/python"
cache="${KERNELHUB_TOOLS_CACHE:-$HOME/.cache/kernelhub}"
status=0
for version in "${@:-2.11.0}"; do
  dir="$cache/torch-$version"
  if [ ! -f "$dir/.complete" ]; then
    echo "== torch $version: downloading the wheel from PyPI (headers, CMake package and libraries only are kept)"
    rm -rf "$dir" && mkdir -p "$dir"
    "$python" -m pip download -q --no-deps --only-binary=:all: "torch==$version" -d "$dir/wheel" || { status=1; continue; }
    (cd "$dir" && unzip -q wheel/torch-*.whl 'torch/include/*' 'torch/share/*' 'torch/lib/*' 'torch/version.py') ||
      { status=1; continue; }
    rm -rf "$dir/wheel" && touch "$dir/.complete"
  fi
  build="build-torch$version"
  echo "== torch $version: configure and build the loader, get_kernel and the Python binding in $build/"
  if ! cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE="$python" \
      -DTorch_DIR="$dir/torch/share/cmake/Torch" -DBUILD_TESTING=OFF -DKERNELHUB_BUILD_KERNELS=OFF \
      -DKERNELHUB_WITH_SERVER=OFF -DKERNELHUB_BUILD_TOOLS=OFF -DKERNELHUB_BUILD_PYTHON=ON >"$build.configure.log" 2>&1; then
    echo "torch $version: configure FAILED"; tail -20 "$build.configure.log"; status=1; continue
  fi
  if ! cmake --build "$build" --target kernelhub_kernelhub kernelhub_python_core >"$build.build.log" 2>&1; then
    echo "torch $version: build FAILED"; grep -E "error" -A3 "$build.build.log" | head -30; status=1; continue
  fi
  echo "torch $version: ok"
done
exit $status
