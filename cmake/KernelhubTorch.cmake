# Finds the LibTorch of the project's Python environment (torch from PyPI): its
# torch.utils.cmake_prefix_path is the LibTorch we build against and load kernels into. Installed
# with the C++ package: a consumer's find_package(kernelhub) finds Torch the same way, or through
# Torch_DIR / CMAKE_PREFIX_PATH when it has no Python3_EXECUTABLE.
#
# Sets KERNELHUB_TORCH_PROBLEM (what was looked at and not found) instead of failing, so that each
# includer says what to do in its own words: the build says how to install the environment, the
# installed package's config how to point CMake at a LibTorch.
set(KERNELHUB_TORCH_PROBLEM "")
if(NOT Torch_DIR AND Python3_EXECUTABLE)
  execute_process(
    COMMAND ${Python3_EXECUTABLE} -c "import torch.utils; print(torch.utils.cmake_prefix_path)"
    OUTPUT_VARIABLE _kh_torch_prefix OUTPUT_STRIP_TRAILING_WHITESPACE
    RESULT_VARIABLE _kh_torch_rc ERROR_QUIET)
  if(_kh_torch_rc EQUAL 0)
    list(APPEND CMAKE_PREFIX_PATH ${_kh_torch_prefix})
  endif()
endif()
# The PyPI torch is built with CUDA; its CMake config looks for the toolkit. We never need
# CUDA to build the host code, and nvcc is only used by kernels/ for the CUDA variant.
# Torch's CMake config probes the installed GPUs with try_run unless told the archs; there is
# no GPU on a build machine, and our CUDA variant sets its own -gencode list.
if(NOT DEFINED ENV{TORCH_CUDA_ARCH_LIST} AND NOT TORCH_CUDA_ARCH_LIST)
  set(TORCH_CUDA_ARCH_LIST "8.0;9.0")
endif()
find_package(Torch CONFIG QUIET)
if(NOT Torch_FOUND)
  if(Torch_DIR)
    set(KERNELHUB_TORCH_PROBLEM "Torch_DIR=${Torch_DIR} holds no TorchConfig.cmake")
  elseif(Python3_EXECUTABLE)
    set(KERNELHUB_TORCH_PROBLEM "`import torch` failed in ${Python3_EXECUTABLE}, and CMAKE_PREFIX_PATH leads to no TorchConfig.cmake")
  else()
    set(KERNELHUB_TORCH_PROBLEM "neither Torch_DIR, CMAKE_PREFIX_PATH nor a Python3_EXECUTABLE with torch leads to a TorchConfig.cmake")
  endif()
  return()
endif()
# A C++ host links only c10 and torch_cpu. The CUDA half of torch (libtorch_cuda, its NCCL,
# cuDNN, cudart from the nvidia-* wheels) is loaded at run time, when a CUDA variant is chosen
# (loader/torch_backend.hpp), exactly as `import torch` does; linking it here would bind the
# system toolkit's libraries instead of the ones torch was built with.
add_library(kernelhub_libtorch INTERFACE)
target_link_libraries(kernelhub_libtorch INTERFACE c10 torch_cpu)
target_include_directories(kernelhub_libtorch SYSTEM INTERFACE ${TORCH_INCLUDE_DIRS})
target_compile_options(kernelhub_libtorch INTERFACE ${TORCH_CXX_FLAGS})
get_filename_component(KERNELHUB_TORCH_LIB_DIR "${TORCH_LIBRARY}" DIRECTORY)
# libtorch_cpu needs libraries from the nvidia-* wheels even on CPU; let the linker find them.
file(GLOB _kh_nvidia_lib_dirs LIST_DIRECTORIES true "${KERNELHUB_TORCH_LIB_DIR}/../../nvidia/*/lib")
foreach(dir ${_kh_nvidia_lib_dirs} ${KERNELHUB_TORCH_LIB_DIR})
  target_link_options(kernelhub_libtorch INTERFACE "LINKER:-rpath-link,${dir}")
endforeach()
