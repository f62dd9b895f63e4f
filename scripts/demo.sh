#!/usr/bin/env bash
# make demo: get the reference kernels through kernelhub and call rms_norm from C++.
set -euo pipefail
build="${1:-build}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

export LOCAL_KERNELS="kernelhub/reference-kernels=$root/$build/kernels"
echo "== kernelhub env"
"$build/bin/kernelhub" env
echo
echo "== kernelhub get kernelhub/reference-kernels   (LOCAL_KERNELS=$LOCAL_KERNELS)"
"$build/bin/kernelhub" get kernelhub/reference-kernels --version 1
echo
echo "== examples/rms_norm_example.cpp: a plain C++ program (no Python) calling the kernel"
"$build/bin/rms_norm_example"
