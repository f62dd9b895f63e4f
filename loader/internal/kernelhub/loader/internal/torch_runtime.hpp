// torch_runtime(): the LibTorch this process runs with, as the resolver needs it: version,
// C++ ABI, and the backend it was built for (CUDA / ROCm / XPU version, or cpu).
//
// Sources: the version from the LibTorch headers we were built with (checked to match the
// loaded libc10 by the dynamic linker's symbol versions of torch itself); the CUDA runtime
// version from torch's CUDA hooks when libtorch_cuda is loaded; otherwise torch's `version.py`
// beside the loaded libc10.so (pip wheels), otherwise cpu.
#pragma once

#include "kernelhub/resolver/environment.hpp"

namespace kernelhub::loader {

resolver::TorchRuntime torch_runtime();

}  // namespace kernelhub::loader
