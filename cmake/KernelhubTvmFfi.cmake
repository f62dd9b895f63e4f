# The TVM-FFI headers (the C ABI: tvm/ffi/c_api.h, dlpack/dlpack.h) from the apache-tvm-ffi
# package's CMake config (tvm_ffi-config.cmake), found through the Python environment as
# KernelhubTorch.cmake finds LibTorch: `python -m tvm_ffi.config --cmakedir`, unless tvm_ffi_DIR or
# CMAKE_PREFIX_PATH already point at it. kernelhub links no TVM-FFI library: the runtime is found and
# loaded at run time (tvm_ffi_loader/runtime.hpp), so these headers are all the build needs.
#
# KERNELHUB_WITH_TVM_FFI=AUTO without the package turns the loader off (and says so); ON requires it.
#
# Defines kernelhub_dlpack (INTERFACE): dlpack.h for the public headers; installed with the package
# under include/kernelhub/third_party, so a consumer needs neither Python nor TVM-FFI to build.
#
# And the runtime this build is made against, as the package's CMake config names it
# (tvm_ffi_LIB_FILES): KERNELHUB_TVM_FFI_RUNTIME (its libtvm_ffi.so), KERNELHUB_TVM_FFI_RUNTIME_DIR,
# KERNELHUB_TVM_FFI_VERSION, and KERNELHUB_TVM_FFI_LICENSES (the wheel's LICENSE and NOTICE:
# Apache-2.0 asks both to go with every copy). The build's kernelhub finds it there, and an install
# carries it (cmake/KernelhubInstall.cmake), so that a program without Python runs as built
# (tvm_ffi_loader/runtime.hpp).
if(NOT tvm_ffi_DIR AND NOT tvm_ffi_ROOT)
  if(NOT Python3_EXECUTABLE)
    find_package(Python3 COMPONENTS Interpreter)
  endif()
  if(Python3_EXECUTABLE)
    execute_process(COMMAND ${Python3_EXECUTABLE} -m tvm_ffi.config --cmakedir
                    OUTPUT_VARIABLE _kh_tvm_ffi_dir OUTPUT_STRIP_TRAILING_WHITESPACE
                    RESULT_VARIABLE _kh_tvm_ffi_rc ERROR_QUIET)
    if(_kh_tvm_ffi_rc EQUAL 0 AND IS_DIRECTORY "${_kh_tvm_ffi_dir}")
      set(tvm_ffi_DIR ${_kh_tvm_ffi_dir})
    endif()
  endif()
endif()
# tvm_ffi-config.cmake asks its Python (FindPython) for the paths again.
if(NOT Python_EXECUTABLE AND Python3_EXECUTABLE)
  set(Python_EXECUTABLE ${Python3_EXECUTABLE})
endif()
find_package(tvm_ffi CONFIG QUIET)
if(NOT tvm_ffi_FOUND)
  set(_kh_tvm_ffi_hint "the apache-tvm-ffi package (its headers) was not found through ${Python3_EXECUTABLE}: "
                       "`pip install apache-tvm-ffi` there (scripts/bootstrap.sh does), give "
                       "-DPython3_EXECUTABLE=<a python that has it> or -Dtvm_ffi_DIR=<its share/cmake/tvm_ffi>")
  if(KERNELHUB_WITH_TVM_FFI STREQUAL "AUTO")
    message(STATUS "kernelhub: no tvm-ffi loader in this build (kernelhub::tvm_ffi, tvm-ffi variants): ${_kh_tvm_ffi_hint}")
    set(KERNELHUB_WITH_TVM_FFI OFF)
    return()
  endif()
  message(FATAL_ERROR "kernelhub: ${_kh_tvm_ffi_hint}; or build without it: -DKERNELHUB_WITH_TVM_FFI=OFF.")
endif()
set(KERNELHUB_WITH_TVM_FFI ON)
# A cross build links the target machine's libtvm_ffi.so (scripts/aarch64.sh: from the aarch64
# wheel), which tvm_ffi-config.cmake cannot report: it asks the build machine's Python.
set(KERNELHUB_TVM_FFI_RUNTIME "" CACHE FILEPATH "libtvm_ffi.so to link the kernels with (cross builds)")
if(KERNELHUB_TVM_FFI_RUNTIME)
  set_target_properties(tvm_ffi::shared PROPERTIES IMPORTED_LOCATION "${KERNELHUB_TVM_FFI_RUNTIME}")
  set(tvm_ffi_LIB_FILES "${KERNELHUB_TVM_FFI_RUNTIME}")
endif()
set(KERNELHUB_TVM_FFI_INCLUDE_DIR ${tvm_ffi_INCLUDE_DIR})
set(KERNELHUB_DLPACK_INCLUDE_DIR ${tvm_ffi_DLPACK_INCLUDE_DIR})
message(STATUS "kernelhub: TVM-FFI headers from ${tvm_ffi_INCLUDE_DIR}")

list(GET tvm_ffi_LIB_FILES 0 KERNELHUB_TVM_FFI_RUNTIME)
get_filename_component(KERNELHUB_TVM_FFI_RUNTIME_DIR ${KERNELHUB_TVM_FFI_RUNTIME} DIRECTORY)
# <site-packages>/tvm_ffi/lib/libtvm_ffi.so: the version in tvm_ffi/_version.py, the licenses in the
# wheel's apache_tvm_ffi-<version>.dist-info/licenses/.
file(STRINGS ${KERNELHUB_TVM_FFI_RUNTIME_DIR}/../_version.py _kh_tvm_ffi_version_line
     REGEX "^__version__ = version = '[^']+'")
string(REGEX REPLACE ".*'([^']+)'.*" "\\1" KERNELHUB_TVM_FFI_VERSION "${_kh_tvm_ffi_version_line}")
file(GLOB KERNELHUB_TVM_FFI_LICENSES ${KERNELHUB_TVM_FFI_RUNTIME_DIR}/../../apache_tvm_ffi-*.dist-info/licenses/*)
message(STATUS "kernelhub: TVM-FFI runtime ${KERNELHUB_TVM_FFI_VERSION}: ${KERNELHUB_TVM_FFI_RUNTIME}")

add_library(kernelhub_dlpack INTERFACE)
set_target_properties(kernelhub_dlpack PROPERTIES EXPORT_NAME dlpack)
target_include_directories(kernelhub_dlpack SYSTEM INTERFACE $<BUILD_INTERFACE:${KERNELHUB_DLPACK_INCLUDE_DIR}>
                                                            $<INSTALL_INTERFACE:include/kernelhub/third_party>)
