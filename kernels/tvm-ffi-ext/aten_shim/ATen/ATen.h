// ATen shim (kh_shim/): ATen/ATen.h for the tvm-ffi build of the reference kernels.
#pragma once
#include "kh_shim/tensor.h"
