// ATen shim (kh_shim/): ATen/cuda/detail/IntegerDivider.cuh for the tvm-ffi build of the reference kernels.
#pragma once
#include "kh_shim/cuda.h"
