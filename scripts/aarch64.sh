#!/usr/bin/env bash
# aarch64-linux (GH200, GB200, GB10), built on this x86_64 machine and run under qemu-user:
#
#   scripts/aarch64.sh build    make aarch64: build-aarch64/bin/ (kernelhub with serve and get,
#                               the tvm-ffi example, the torch-free Catch2 suites) and
#                               build-aarch64/kernels/build/ (the reference kernels' CPU variants:
#                               torch op and tvm-ffi), the layout of build/
#   scripts/aarch64.sh test     that, then the suites under qemu (ctest) and the Python tests of the
#                               aarch64 build (tests/python/test_aarch64_*.py): end to end through
#                               the x86_64 `kernelhub serve`, selection against kernels 0.19.1, the
#                               release artifacts of scripts/release.sh run under qemu
#   scripts/aarch64.sh torch    also kernelhub-get and hub-publish for aarch64 (LibTorch), in
#                               build-aarch64-torch/ (not in make test: see docs/AARCH64.md)
#   scripts/aarch64.sh cuda     also the reference kernels' CUDA variant for aarch64 (sbsa), sm_90
#                               and sm_100 (GH200, GB200) by default (KERNELHUB_KERNEL_ARCHS), with
#                               this machine's nvcc (not in make test: docs/AARCH64.md)
#   scripts/aarch64.sh release [all|wheel|cli]
#                               the aarch64 tarball and wheel (scripts/release.sh; make dist, make wheel)
#   scripts/aarch64.sh prefix   print the folder of the aarch64 inputs (built if missing)
#
# Two compilers, each for what only it can build:
# - zig's clang for aarch64-linux-gnu.2.28 (scripts/portable_toolchain.sh, the release toolchain):
#   the torch-free layers, kernelhub, the tests. scripts/release.sh compiles the same sources with
#   the same flags for the aarch64 tarball and wheel, so ccache hands it these objects.
# - Debian's g++-aarch64-linux-gnu for what links the aarch64 LibTorch (the torch op variant, and
#   with `torch` kernelhub-get and hub-publish): torch shares libstdc++ with them; zig has libc++.
#   The tvm-ffi variant too, as kernel-builder builds it (libstdc++, libtvm_ffi.so).
# Inputs from PyPI's aarch64 wheels, the versions of requirements.txt, unpacked once into
# ${KERNELHUB_TOOLS_CACHE:-~/.cache/kernelhub}/aarch64-<key> (<key>: this script's recipe and the
# versions): LibTorch (torch/lib, include, share), the CUDA runtime and CUPTI (libtorch_cpu needs
# both even on CPU), apache-tvm-ffi (libtvm_ffi.so); Catch2's header; an aarch64 `python3.11` (a
# launcher of Debian's libpython3.11:arm64) for the wheel. qemu-aarch64-static runs the programs
# with the aarch64 glibc and libstdc++ of Debian's cross packages (/usr/aarch64-linux-gnu), and
# only those (Note [One glibc under qemu]).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
what="${1:-build}"
case "$what" in build | test | torch | cuda | release | prefix) ;;
  *) echo "usage: $0 [build|test|torch|cuda|release [all|wheel|cli]|prefix]" >&2 && exit 2 ;;
esac
build="$root/${KERNELHUB_AARCH64_BUILD_DIR:-build-aarch64}"
cache="${KERNELHUB_TOOLS_CACHE:-$HOME/.cache/kernelhub}"
jobs="${JOBS:-$(nproc)}"
python="$root/.venv/bin/python"
export PATH="$root/.venv/bin:$PATH"  # the project's Python first, as scripts/release.sh has it
# ccache as the Makefile sets it, also when this runs alone: scripts/release.sh then finds what the
# aarch64 build compiled (the same sources and flags), and a second checkout what the first did.
export CMAKE_C_COMPILER_LAUNCHER="${CMAKE_C_COMPILER_LAUNCHER:-$root/scripts/ccache_launcher.sh}"
export CMAKE_CXX_COMPILER_LAUNCHER="${CMAKE_CXX_COMPILER_LAUNCHER:-$root/scripts/ccache_launcher.sh}"
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$root}" CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
export CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-20G}"
sysroot=/usr/aarch64-linux-gnu
# Note [One glibc under qemu]: -L makes the guest's dynamic linker the cross packages' (libc6-arm64-cross,
# 2.36-8cross1), but its search path (/lib/aarch64-linux-gnu first) reaches the host's folders where
# the prefix has none, and libpython3.11:arm64 (above) puts Debian's own arm64 libc6 there
# (2.36-9+deb12u14: bookworm's updates, which the cross package does not follow). One process then
# mixes the two builds' GLIBC_PRIVATE layouts: their _rtld_global differ in size (4512, 4520 bytes),
# and the first pthread_create spins forever in its stack cache walk (the list head 8 bytes off),
# which is how every program that starts a thread (cpp-httplib's server) hung. The guest's
# LD_LIBRARY_PATH names the cross glibc (and its libstdc++), so the linker and libc are one build.
emulator=(qemu-aarch64-static -L "$sysroot" -E "LD_LIBRARY_PATH=$sysroot/lib")
say() { printf '\033[1m[aarch64]\033[0m %s\n' "$*" >&2; }
timed() {  # the step's own exit status, after its time (a failure must not read as success)
  local what="$1" start=$SECONDS status=0
  shift
  "$@" || status=$?
  say "$what: $((SECONDS - start)) s"
  return $status
}

# ---- Debian's packages -----------------------------------------------------------------------------
# The cross compiler (with the aarch64 glibc and libstdc++ in /usr/aarch64-linux-gnu), qemu-user, and
# for the wheel's aarch64 Python, libpython3.11 of the arm64 architecture (multiarch: beside the
# amd64 one, nothing replaced).
apt_packages=(g++-aarch64-linux-gnu qemu-user-static libpython3.11:arm64)
install_packages() {
  local missing=() p sudo=""
  for p in "${apt_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ "${#missing[@]}" -eq 0 ] && return 0
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    say "adding the arm64 architecture to dpkg (for libpython3.11:arm64)"
    $sudo dpkg --add-architecture arm64
  fi
  say "installing Debian packages: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# ---- the aarch64 inputs: PyPI's wheels, Catch2, the Python launcher ---------------------------------
pinned() { sed -n "s/^$1==\([^ ]*\).*/\1/p" requirements.txt; }
installed_version() { "$python" -c "import importlib.metadata as m; print(m.version('$1'))"; }
# What libtorch_cpu needs from the nvidia-* wheels, at the versions torch's cuda-toolkit pin brings
# (those of .venv, which pip resolved from the same torch).
nvidia_wheels=(nvidia-cuda-runtime nvidia-cuda-cupti)
recipe=2
make_prefix() {
  local key versions=() w
  versions+=("torch==$(pinned torch)" "apache-tvm-ffi==$(pinned apache-tvm-ffi)")
  for w in "${nvidia_wheels[@]}"; do versions+=("$w==$(installed_version "$w")"); done
  key="$( (declare -p recipe; printf '%s\n' "${versions[@]}"; dpkg-query -W -f='${Version}\n' catch2 libpython3.11:arm64) |
          sha256sum | cut -c1-16)"
  prefix="$cache/aarch64-$key"
  mkdir -p "$cache"
  exec 8>"$prefix.lock"
  flock 8
  if [ -f "$prefix/.complete" ]; then
    flock -u 8
    return 0
  fi
  say "unpacking the aarch64 wheels into $prefix (first time only): ${versions[*]}"
  rm -rf "$prefix" && mkdir -p "$prefix/wheels" "$prefix/lib" "$prefix/bin"
  # Every manylinux tag an aarch64 wheel of these carries (pip matches the tags given, exactly).
  local platforms=(--platform manylinux_2_28_aarch64 --platform manylinux_2_25_aarch64
                   --platform manylinux_2_24_aarch64 --platform manylinux_2_17_aarch64 --platform manylinux2014_aarch64)
  "$python" -m pip download -q --no-deps --only-binary=:all: "${platforms[@]}" \
    --python-version "$("$python" -c 'import sys; print(f"{sys.version_info.major}.{sys.version_info.minor}")')" \
    -d "$prefix/wheels" "${versions[@]}"
  # LibTorch only: what building against it and loading it needs (not torch's Python half).
  (cd "$prefix" && "$python" - "$prefix"/wheels/torch-*.whl <<'EOF'
import sys, zipfile
keep = ("torch/lib/", "torch/include/", "torch/share/", "torch/version.py")
with zipfile.ZipFile(sys.argv[1]) as z:
    z.extractall(".", [n for n in z.namelist() if n.startswith(keep)])
EOF
  )
  # The aarch64 LibTorch is a CUDA build, whose CMake config would look for a CUDA toolkit and find
  # this machine's x86_64 one. What links LibTorch here (c10 and torch_cpu: cmake/KernelhubTorch.cmake)
  # needs none of it, so its config is made a CPU build's.
  "$python" - "$prefix/torch/share/cmake/Caffe2/Caffe2Config.cmake" <<'EOF'
import sys
path = sys.argv[1]
text = open(path).read()
cuda = "if(1)\n  # The file public/cuda.cmake exclusively uses CAFFE2_USE_*."
assert cuda in text, "Caffe2Config.cmake: no CUDA block where scripts/aarch64.sh expects it"
open(path, "w").write(text.replace(cuda, "if(0)  # CPU only: scripts/aarch64.sh\n  # The file public/cuda.cmake exclusively uses CAFFE2_USE_*."))
EOF
  for w in "$prefix"/wheels/nvidia_*.whl; do (cd "$prefix" && "$python" -m zipfile -e "$w" .); done
  (cd "$prefix" && "$python" -m zipfile -e "$prefix"/wheels/apache_tvm_ffi-*.whl .)
  chmod -R u+w "$prefix"
  rm -rf "$prefix/wheels"
  # Catch2 2's single header, and a package config that points at it (Debian's also names its
  # x86_64 libCatch2WithMain.a, which an aarch64 build must not see).
  mkdir -p "$prefix/include/catch2" "$prefix/lib/cmake/Catch2"
  cp /usr/include/catch2/catch.hpp "$prefix/include/catch2/"
  cp /usr/lib/cmake/Catch2/Catch.cmake /usr/lib/cmake/Catch2/CatchAddTests.cmake "$prefix/lib/cmake/Catch2/"
  cat >"$prefix/lib/cmake/Catch2/Catch2Config.cmake" <<'EOF'
# Written by scripts/aarch64.sh: Catch2's header-only target, and include(Catch) for catch_discover_tests.
add_library(Catch2::Catch2 INTERFACE IMPORTED)
set_target_properties(Catch2::Catch2 PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${CMAKE_CURRENT_LIST_DIR}/../../../include")
list(APPEND CMAKE_MODULE_PATH "${CMAKE_CURRENT_LIST_DIR}")
EOF
  # An aarch64 python3.11: Py_BytesMain of Debian's libpython3.11 (arm64), its standard library in
  # /usr/lib/python3.11 beside the amd64 one's (extension modules named for their machine).
  printf 'int Py_BytesMain(int argc, char** argv);\nint main(int argc, char** argv) { return Py_BytesMain(argc, argv); }\n' \
    >"$prefix/bin/python.c"
  aarch64-linux-gnu-gcc -O2 "$prefix/bin/python.c" -o "$prefix/bin/python3.11" /usr/lib/aarch64-linux-gnu/libpython3.11.so.1.0
  rm "$prefix/bin/python.c"
  # Debian's cross compiler for what links LibTorch.
  cat >"$prefix/gcc-toolchain.cmake" <<EOF
# Written by scripts/aarch64.sh: Debian's aarch64 cross compiler, the aarch64 inputs of $prefix.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_CROSSCOMPILING_EMULATOR ${emulator[*]})  # Note [One glibc under qemu]; nothing built here runs through it
list(PREPEND CMAKE_PREFIX_PATH "$prefix")
EOF
  du -sh "$prefix" | cut -f1 | sed 's/^/size: /' >"$prefix/size.txt"
  touch "$prefix/.complete"
  flock -u 8
}

# ---- the builds ------------------------------------------------------------------------------------
# The zig build: what scripts/release.sh builds for the aarch64 release (the same flags: Release, no
# LibTorch, KERNELHUB_DEVELOPER off), with the tests and the example.
configure_zig() {
  local toolchain="$1"
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_TOOLCHAIN_FILE="$toolchain" \
    -DKERNELHUB_WITH_TORCH=OFF -DKERNELHUB_BUILD_PYTHON=OFF -DKERNELHUB_DEVELOPER=OFF -DBUILD_TESTING=ON \
    -DKERNELHUB_WITH_TVM_FFI=ON -DKERNELHUB_TEST_WHOLE_PROGRAMS=ON -DCMAKE_PREFIX_PATH="$prefix" \
    "-DCMAKE_CROSSCOMPILING_EMULATOR=$(IFS=';' && echo "${emulator[*]}")" >"$build.configure.log" ||
    { cat "$build.configure.log" >&2 && exit 1; }
}

# What Debian's cross g++ builds against: the aarch64 LibTorch and libtvm_ffi.so, and this CPython's
# headers (an LP64 Linux's pyconfig.h differs from aarch64's only in what extensions never read).
gcc_args() {
  echo -DCMAKE_BUILD_TYPE=Release -DCMAKE_TOOLCHAIN_FILE="$prefix/gcc-toolchain.cmake" \
    -DPython3_EXECUTABLE="$python" -DPython3_INCLUDE_DIR="$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')" \
    -DTorch_DIR="$prefix/torch/share/cmake/Torch" -Dtvm_ffi_DIR="$prefix/tvm_ffi/share/cmake/tvm_ffi" \
    -DKERNELHUB_TVM_FFI_RUNTIME="$prefix/tvm_ffi/lib/libtvm_ffi.so" -DKERNELHUB_BUILD_CUDA_KERNELS=OFF
}

# The reference kernels' CPU variants: kernels/ as a project of its own, into build-aarch64/kernels/build/.
configure_kernels() {
  # shellcheck disable=SC2046  # gcc_args: paths without spaces, one word each
  cmake -S kernels -B "$build/kernels-project" -G Ninja $(gcc_args) \
    -DKERNELHUB_KERNELS_OUTPUT_DIR="$build/kernels/build" >"$build.kernels-configure.log" 2>&1 ||
    { cat "$build.kernels-configure.log" >&2 && exit 1; }
}

do_build() {
  local toolchain
  timed "Debian packages" install_packages
  timed "aarch64 inputs ($cache/aarch64-*)" make_prefix
  toolchain="$(KERNELHUB_PORTABLE_TARGET=aarch64-linux-gnu.2.28 scripts/portable_toolchain.sh)"
  mkdir -p "$build"
  timed "configure (zig, aarch64-linux-gnu.2.28)" configure_zig "$toolchain"
  timed "build (zig: kernelhub, the tvm-ffi example, the torch-free suites)" \
    cmake --build "$build" -j "$jobs" --target kernelhub tvm_ffi_rms_norm kernelhub_test_programs
  timed "configure (g++-aarch64-linux-gnu, the reference kernels)" configure_kernels
  timed "build (g++: the reference kernels' CPU variants)" \
    cmake --build "$build/kernels-project" -j "$jobs" --target reference_kernels_cpu reference_kernels_tvm_ffi_cpu
  ls "$build/kernels/build"
}

# ---- the tests -------------------------------------------------------------------------------------
do_test() {
  local status=0
  do_build
  echo "== ctest ($build, under qemu-aarch64: one test per program)"
  timed "ctest under qemu" ctest --test-dir "$build" --output-on-failure --timeout 300 -j "$jobs" || status=1
  echo "== release artifacts for aarch64 (scripts/release.sh)"
  timed "aarch64 tarball and wheel" release all || status=1
  echo "== pytest tests/python/test_aarch64_*.py"
  # The x86_64 build whose server and hub-publish the end-to-end tests use: make test's, else build/.
  timed "pytest (aarch64 under qemu)" env KERNELHUB_BUILD_DIR="${KERNELHUB_BUILD_DIR:-$root/build}" \
    KERNELHUB_AARCH64_BUILD_DIR="$build" KERNELHUB_AARCH64_PREFIX="$prefix" \
    "$python" -m pytest tests/python/test_aarch64_*.py -q -p no:cacheprovider -rs || status=1
  return $status
}

do_torch() {
  local torch_build="$root/build-aarch64-torch"
  do_build
  # shellcheck disable=SC2046
  timed "configure (g++-aarch64-linux-gnu, with LibTorch)" cmake -S . -B "$torch_build" -G Ninja $(gcc_args) \
    -DKERNELHUB_BUILD_KERNELS=OFF -DKERNELHUB_BUILD_PYTHON=OFF -DKERNELHUB_DEVELOPER=OFF -DBUILD_TESTING=OFF
  timed "build (g++: kernelhub-get, hub-publish)" cmake --build "$torch_build" -j "$jobs" --target kernelhub-get hub-publish
  cp "$torch_build/bin/kernelhub-get" "$torch_build/bin/hub-publish" "$build/bin/"
}

# The CUDA variant: nvcc compiles for aarch64 with Debian's cross g++ as its host compiler, and looks
# for the target's headers and libraries in <toolkit>/targets/sbsa-linux, which an x86_64 toolkit
# lacks. A toolkit folder beside the aarch64 inputs stands in: this machine's nvcc (its programs
# linked, its nvcc.profile copied so that nvcc takes this folder for its own), its headers (the
# same for both machines) and the aarch64 CUDA runtime of the nvidia-cuda-runtime wheel.
do_cuda() {
  local nvcc toolkit
  nvcc="$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)"
  [ -x "$nvcc" ] || { say "no nvcc: the CUDA variant needs the CUDA toolkit" && exit 1; }
  toolkit="$(cd "$(dirname "$(readlink -f "$nvcc")")/.." && pwd)"
  do_build
  local stand_in="$build/cuda-sbsa"
  rm -rf "$stand_in" && mkdir -p "$stand_in/bin" "$stand_in/targets/sbsa-linux/lib"
  ln -s "$toolkit"/bin/* "$stand_in/bin/" && rm "$stand_in/bin/nvcc.profile" && cp "$toolkit/bin/nvcc.profile" "$stand_in/bin/"
  ln -s "$toolkit/nvvm" "$stand_in/nvvm"
  ln -s "$toolkit/targets/x86_64-linux/include" "$stand_in/targets/sbsa-linux/include"
  ln -s "$prefix"/nvidia/cu13/lib/* "$stand_in/targets/sbsa-linux/lib/"
  ln -s libcudart.so.13 "$stand_in/targets/sbsa-linux/lib/libcudart.so"
  ln -s targets/sbsa-linux/include "$stand_in/include"
  ln -s targets/sbsa-linux/lib "$stand_in/lib64"
  # shellcheck disable=SC2046
  timed "configure (nvcc for aarch64, the CUDA variant)" cmake -S kernels -B "$build/kernels-project" -G Ninja $(gcc_args) \
    -DKERNELHUB_KERNELS_OUTPUT_DIR="$build/kernels/build" -DKERNELHUB_BUILD_CUDA_KERNELS=ON \
    -DCMAKE_CUDA_COMPILER="$stand_in/bin/nvcc" -DCMAKE_CUDA_HOST_COMPILER=aarch64-linux-gnu-g++ \
    -DCUDAToolkit_ROOT="$stand_in" -DKERNELHUB_KERNEL_ARCHS="${KERNELHUB_KERNEL_ARCHS:-9.0;10.0}"
  timed "build (nvcc: the CUDA variant for aarch64)" cmake --build "$build/kernels-project" -j "$jobs" --target reference_kernels
  ls "$build/kernels/build"
}

release() { KERNELHUB_PORTABLE_TARGET=aarch64-linux-gnu.2.28 scripts/release.sh "$@"; }

case "$what" in
  prefix) install_packages && make_prefix && echo "$prefix" ;;
  release) install_packages && release "${2:-all}" ;;
  build) do_build ;;
  test) do_test ;;
  torch) do_torch ;;
  cuda) do_cuda ;;
esac
