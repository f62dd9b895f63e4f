#!/usr/bin/env bash
# On the GPU machine: what a warm torch-free `kernelhub get` of a tvm-ffi build costs there, as a
# new process (bench/client/TORCH_FREE_GET.md has the analysis and the CPU machine's numbers).
# Builds this tree (Release: kernelhub, kernelhub-serve, hub-publish, the reference kernels' tvm-ffi
# variants, CUDA for sm_90 and CPU) with the image's tools, and, when an earlier commit travels as
# .old/src.tar.gz (`mkdir -p .old && git archive <commit> | gzip > .old/src.tar.gz`), that
# commit's kernelhub too. Then bench/client/torch_free_get.py, where no torch is (no python3 on the
# command's PATH): --backend cuda (the CUDA driver probed, and a row with the GPUs given: no probe)
# and --backend cpu, the earlier build's gets in the same rounds (--before).
#
#   [BACKENDS=cuda] bash bench/client/torch_free_get_on_device.sh [RUNS]
#
# Before the call, here: bash bench/device_debs.sh (Debian packages the image lacks, into .debs/);
# and, where the image's Python lacks apache-tvm-ffi, its wheel into .whl/:
#   pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#     --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 -d .whl apache-tvm-ffi==0.1.15.post2
# With the CLI tarball in .dist/ (`scripts/release.sh cli`, then copy dist/kernelhub-*-x86_64-linux.tar.gz
# there), the tarball's gets are timed beside this build's, and env and the offline get traced
# (bench/client/startup_trace.py).
# Carry: [".debs", ".whl", ".old"] (and ".dist"). Writes $OUT/torch-free-get-{cuda,cpu}.md and .json, and the
# build logs.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
out="${OUT:-/tmp/out}"
runs="${1:-40}"
work=/tmp/tfg
mkdir -p "$out" "$work"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
source bench/device_sysroot.sh
python3 -c 'import tvm_ffi, torch; print("tvm_ffi", tvm_ffi.__version__, "torch", torch.__version__)' ||
  { echo "the image's Python has no apache-tvm-ffi: carry its wheel in .whl/ (see above)"; exit 1; }

configure() {  # configure <src> <build>
  cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE="$(command -v python3)" \
    -DBUILD_TESTING=OFF -DKERNELHUB_BUILD_PYTHON=OFF -DKERNELHUB_DEVELOPER=OFF -DCMAKE_PREFIX_PATH="$sysroot/usr" \
    -DKERNELHUB_KERNEL_ARCHS=9.0 -DTORCH_CUDA_ARCH_LIST=9.0 >"$out/configure-$(basename "$2").log" 2>&1 ||
    { tail -30 "$out/configure-$(basename "$2").log"; exit 1; }
}
configure . "$work/new"
time cmake --build "$work/new" -j "$(nproc)" --target kernelhub hub-publish reference_kernels_tvm_ffi \
  >"$out/build-new.log" 2>&1 || { grep -E "error|FAILED" -A5 "$out/build-new.log" | head -40; exit 1; }
ls "$work/new/kernels/build"
before=()
if [ -f .old/src.tar.gz ]; then
  mkdir -p "$work/old-src" && tar -xzf .old/src.tar.gz -C "$work/old-src"
  configure "$work/old-src" "$work/old"
  time cmake --build "$work/old" -j "$(nproc)" --target kernelhub >"$out/build-old.log" 2>&1 ||
    { grep -E "error|FAILED" -A5 "$out/build-old.log" | head -40; exit 1; }
  before=(--before "$work/old/bin/kernelhub")
fi

# The CLI tarball (`make dist` here: scripts/release.sh cli), when one travels in .dist/: timed
# beside this build, which is then the --before of its rows.
kernelhub=() trace=()
tarball=$(ls .dist/kernelhub-*-x86_64-linux.tar.gz 2>/dev/null | head -1)
if [ -n "$tarball" ]; then
  mkdir -p "$work/tarball" && tar -xzf "$tarball" -C "$work/tarball" --strip-components=1
  kernelhub=(--kernelhub "$work/tarball/bin/kernelhub")
  before=(--before "$work/new/bin/kernelhub" --before-label "development build")
  trace=(--trace)
fi

for backend in ${BACKENDS:-cuda cpu}; do  # BACKENDS=cuda: the GPU rows alone
  echo "== --backend $backend"
  python3 bench/client/torch_free_get.py --build "$work/new" --runs "$runs" --backend "$backend" "${before[@]}" \
    "${kernelhub[@]}" "${trace[@]}" --json "$out/torch-free-get-$backend.json" | tee "$out/torch-free-get-$backend.md"
done
