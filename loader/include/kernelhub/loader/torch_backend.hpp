// The device half of LibTorch, loaded on demand.
//
// A C++ host links only c10 and torch_cpu (cmake/KernelhubTorch.cmake). A CUDA kernel needs
// libtorch_cuda and libc10_cuda in the process, with the CUDA libraries torch was built with (the
// nvidia-* wheels, found through libtorch_cuda's own RPATH), exactly as `import torch` provides
// them. ensure_torch_cuda_loaded() dlopens libtorch_cuda.so from the directory of the libc10.so
// this process runs with, RTLD_GLOBAL, so its CUDA hooks register and the kernel's NEEDED entries
// resolve by soname. Loading it needs no GPU.
//
// Thread safety: serialised; later calls are no-ops.
#pragma once

#include <filesystem>

#include "kernelhub/base/result.hpp"

namespace kernelhub::loader {

// The directory of the libc10.so loaded in this process; empty if none.
std::filesystem::path torch_library_dir();

// Errors: kLoadFailed naming the library and the dlerror text; kNotFound when this LibTorch
// has no CUDA half (a CPU-only build).
Status ensure_torch_cuda_loaded();

}  // namespace kernelhub::loader
