#!/usr/bin/env bash
# rms128_probe.cu with the product's kernel beside its copies: compiles rms_norm_cuda.cu to an sm_90
# cubin against the installed torch's headers, finds rms_norm_exact_rows_kernel<bf16, 16, 2, true>
# in it, and runs the probe with it. CSV on stdout (bench/gpu/NOTES.md, 2026-12-02).
#
#   bash bench/gpu/rms128_real.sh [NVCC_FLAGS...] > rms128.csv
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
torch_dir=$(python3 -c 'import os, torch; print(os.path.dirname(torch.__file__))')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
nvcc -gencode arch=compute_90,code=sm_90 -std=c++20 -O3 -cubin --expt-relaxed-constexpr \
  -I "$torch_dir/include" -I "$torch_dir/include/torch/csrc/api/include" -I kernels/torch-ext \
  -DTORCH_EXTENSION_NAME=probe "$@" -o "$work/rms.cubin" kernels/kernel_src/rms_norm/rms_norm_cuda.cu
name=$(cuobjdump -elf "$work/rms.cubin" |
  grep -o '_ZN[^ (]*rms_norm_exact_rows_kernelIN3c108BFloat16ELi16ELi2ELb1EEEv[^ (]*' | head -1)
[ -n "$name" ] || { echo "rms_norm_exact_rows_kernel<bf16, 16, 2, true> not in the cubin" >&2; exit 1; }
nvcc -O3 -arch=sm_90 -std=c++17 -o "$work/probe" bench/gpu/rms128_probe.cu -lcuda
threads=$(grep -o 'define KH_EXACT_ROW_BLOCK [0-9]*' kernels/kernel_src/common/row_registers.cuh | awk '{print $3}')
"$work/probe" "$work/rms.cubin" "$name" "${threads:-128}"
