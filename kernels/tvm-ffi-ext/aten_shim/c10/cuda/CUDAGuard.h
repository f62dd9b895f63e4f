// ATen shim (kh_shim/): c10/cuda/CUDAGuard.h for the tvm-ffi build of the reference kernels.
#pragma once
#include "kh_shim/cuda.h"
