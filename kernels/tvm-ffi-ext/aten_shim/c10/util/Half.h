// ATen shim (kh_shim/): c10/util/Half.h for the tvm-ffi build of the reference kernels.
#pragma once
#include "kh_shim/scalar.h"
