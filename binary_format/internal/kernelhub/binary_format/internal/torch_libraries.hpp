// The libraries of the LibTorch this process runs with, found and loaded the way `import torch`
// has them, so that a kernel linked against CMake's `torch` target loads in a plain C++ host.
//
// A kernel-builder op library links the `torch` target: besides libc10 and libtorch_cpu it
// needs libtorch.so and, against a CUDA torch, libtorch_cuda.so, libc10_cuda.so and CUDA runtime
// libraries (libcudart.so.13, ... from the nvidia-* wheels). It has no RUNPATH: in Python,
// `import torch` has loaded all of them before the kernel is imported. A C++ host links only
// libc10 and libtorch_cpu, so kernelhub provides the rest the same way: a library a kernel needs
// is looked up where this torch's own libraries look (torch/lib, then the directories of their
// RPATH/RUNPATH with $ORIGIN expanded, i.e. the nvidia-* wheels beside torch) and loaded by
// absolute path, RTLD_GLOBAL, before the kernel. Nothing depends on LD_LIBRARY_PATH or the
// working directory, and a library torch does not provide is never searched for here.
//
// Thread safety: of_this_process() is computed once; loads are serialised.
#pragma once

#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

#include "kernelhub/base/result.hpp"

namespace kernelhub::binary_format {

struct TorchLibraries {
  std::filesystem::path lib_dir;                   // torch/lib; empty when no LibTorch is loaded
  std::vector<std::filesystem::path> search_dirs;  // lib_dir, then torch's own RPATH directories

  // The LibTorch of this process: the directory of the loaded libc10.so and libc10's RPATH.
  static const TorchLibraries& of_this_process();
  // The same for a torch/lib directory given by the caller (tests; another torch on disk).
  static TorchLibraries at(const std::filesystem::path& lib_dir);

  // The absolute path of the library `soname` as this torch would resolve it; none when torch
  // does not provide it.
  std::optional<std::filesystem::path> find(std::string_view soname) const;
};

// True for the names of torch's own libraries (libtorch*.so, libc10*.so, libcaffe2_*.so,
// libshm.so): a kernel that needs one this torch lacks was built against another torch build.
bool is_torch_library_name(std::string_view soname);

// Loads a library of this torch by absolute path, RTLD_NOW | RTLD_GLOBAL (later calls for the
// same file are no-ops). libtorch_cuda.so and libtorch.so register torch's CUDA hooks.
// Errors: kLoadFailed naming the library and the dynamic linker's reason.
Status load_torch_library(const std::filesystem::path& path);

// Loads libtorch_cuda.so of this torch (see load_torch_library). Loading it needs no GPU.
// Errors: kNotFound when this LibTorch has no CUDA half (a CPU-only build), kLoadFailed.
Status ensure_torch_cuda_loaded();

}  // namespace kernelhub::binary_format
