# Finds the LibTorch of the project's Python environment (torch from PyPI): its
# torch.utils.cmake_prefix_path is the LibTorch we build against and load kernels into. Installed
# with the C++ package: a consumer's find_package(kernelhub) finds Torch the same way, or through
# Torch_DIR / CMAKE_PREFIX_PATH when it has no Python3_EXECUTABLE.
if(NOT Torch_DIR AND Python3_EXECUTABLE)
  execute_process(
    COMMAND ${Python3_EXECUTABLE} -c "import torch.utils; print(torch.utils.cmake_prefix_path)"
    OUTPUT_VARIABLE _kh_torch_prefix OUTPUT_STRIP_TRAILING_WHITESPACE
    RESULT_VARIABLE _kh_torch_rc)
  if(NOT _kh_torch_rc EQUAL 0)
    message(FATAL_ERROR "kernelhub: `import torch` failed in ${Python3_EXECUTABLE}. "
                        "Run scripts/bootstrap.sh (or `make test`), which installs torch into .venv.")
  endif()
  list(APPEND CMAKE_PREFIX_PATH ${_kh_torch_prefix})
endif()
# The PyPI torch is built with CUDA; its CMake config looks for the toolkit. We never need
# CUDA to build the host code, and nvcc is only used by kernels/ for the CUDA variant.
# Torch's CMake config probes the installed GPUs with try_run unless told the archs; there is
# no GPU on a build machine, and our CUDA variant sets its own -gencode list.
if(NOT DEFINED ENV{TORCH_CUDA_ARCH_LIST} AND NOT TORCH_CUDA_ARCH_LIST)
  set(TORCH_CUDA_ARCH_LIST "8.0;9.0")
endif()
find_package(Torch REQUIRED)
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
