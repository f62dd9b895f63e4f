// ATen shim (kh_shim/): ATen/OpMathType.h for the tvm-ffi build of the reference kernels.
#pragma once
#include "kh_shim/scalar.h"
