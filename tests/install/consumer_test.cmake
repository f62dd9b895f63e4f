# Run by ctest (tests/install/CMakeLists.txt): BUILD_DIR, SOURCE_DIR, WORK_DIR, PYTHON, GENERATOR,
# KERNEL_DIR, WITH_TVM_FFI. Fails (FATAL_ERROR) with the step's output when a step fails.
function(step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(step_output "${out}${err}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
step("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix} --component cpp)
set(installed_files lib/cmake/kernelhub/kernelhubConfig.cmake lib/cmake/kernelhub/kernelhubConfigVersion.cmake
                    include/kernelhub/kernelhub.hpp include/kernelhub/fetch/fetch_kernel.hpp lib/libkernelhub_kernelhub.a
                    bin/kernelhub bin/kernelhub-get bin/kernelhub-serve)
if(WITH_TVM_FFI)  # the runtime the package is built against, with its license (cmake/KernelhubInstall.cmake)
  list(APPEND installed_files lib/kernelhub/libtvm_ffi.so share/doc/kernelhub/apache-tvm-ffi/LICENSE
                              share/doc/kernelhub/apache-tvm-ffi/NOTICE)
endif()
foreach(file ${installed_files})
  if(NOT EXISTS ${prefix}/${file})
    message(FATAL_ERROR "the install has no ${file}")
  endif()
endforeach()

# The installed headers are the public API, exactly (public_headers.cmake), and each compiles alone
# against the install, with only the component it belongs to: a public header that includes an
# internal one, or needs another header first, fails here.
include(${CMAKE_CURRENT_LIST_DIR}/public_headers.cmake)
set(expected ${KERNELHUB_PUBLIC_HEADERS} ${KERNELHUB_PUBLIC_HEADERS_SIGSTORE} ${KERNELHUB_PUBLIC_HEADERS_TORCH})
if(WITH_TVM_FFI)
  list(APPEND expected ${KERNELHUB_PUBLIC_HEADERS_TVM_FFI})
endif()
file(GLOB_RECURSE installed LIST_DIRECTORIES false RELATIVE ${prefix}/include ${prefix}/include/*)
set(extra ${installed})
list(REMOVE_ITEM extra ${expected})
set(missing ${expected})
list(REMOVE_ITEM missing ${installed})
if(extra OR missing)
  string(REPLACE ";" "\n  " extra "${extra}")
  string(REPLACE ";" "\n  " missing "${missing}")
  message(FATAL_ERROR "the installed headers are not the public API (tests/install/public_headers.cmake):\n"
                      "installed, not public:\n  ${extra}\nmissing:\n  ${missing}")
endif()
set(headers_project ${WORK_DIR}/headers)
set(headers_cmake "cmake_minimum_required(VERSION 3.25)\nproject(public_headers LANGUAGES CXX)\n")
set(components fetch sigstore kernelhub)
if(WITH_TVM_FFI)
  list(APPEND components tvm_ffi)
endif()
string(APPEND headers_cmake "find_package(kernelhub CONFIG REQUIRED COMPONENTS ${components})\n")
foreach(component ${components})
  if(component STREQUAL "kernelhub")
    set(headers ${KERNELHUB_PUBLIC_HEADERS_TORCH})
  elseif(component STREQUAL "sigstore")
    set(headers ${KERNELHUB_PUBLIC_HEADERS_SIGSTORE})
  elseif(component STREQUAL "tvm_ffi")
    set(headers ${KERNELHUB_PUBLIC_HEADERS_TVM_FFI})
    list(FILTER headers INCLUDE REGEX "\\.hpp$")
  else()
    set(headers ${KERNELHUB_PUBLIC_HEADERS})
  endif()
  set(sources "")
  foreach(header ${headers})
    string(MAKE_C_IDENTIFIER ${header} tu)
    file(WRITE ${headers_project}/${tu}.cpp "#include <${header}>\n#include <${header}>\n")
    list(APPEND sources ${tu}.cpp)
  endforeach()
  string(APPEND headers_cmake "add_library(alone_${component} OBJECT ${sources})\n"
                              "target_link_libraries(alone_${component} PRIVATE kernelhub::${component})\n"
                              "target_compile_options(alone_${component} PRIVATE -Wall -Wextra -Werror)\n")
endforeach()
file(WRITE ${headers_project}/CMakeLists.txt "${headers_cmake}")
step("configuring one translation unit per public header" ${CMAKE_COMMAND} -S ${headers_project}
     -B ${headers_project}/build -G ${GENERATOR} -DCMAKE_PREFIX_PATH=${prefix} -DPython3_EXECUTABLE=${PYTHON})
step("compiling each public header alone" ${CMAKE_COMMAND} --build ${headers_project}/build)

step("the installed CLI" ${prefix}/bin/kernelhub --help)
# `kernelhub get` runs the installed kernelhub-get beside it, which finds its LibTorch (INSTALL_RPATH),
# for the torch build it selects with the torch of PYTHON's environment (without a torch, it loads
# the tvm-ffi build itself: tests/python/test_tvm_ffi_example.py).
get_filename_component(venv ${PYTHON} DIRECTORY)
get_filename_component(venv ${venv} DIRECTORY)
step("the installed `kernelhub get`" ${CMAKE_COMMAND} -E env LOCAL_KERNELS=kernelhub/reference-kernels=${KERNEL_DIR}
     VIRTUAL_ENV=${venv} ${prefix}/bin/kernelhub get kernelhub/reference-kernels --json)
if(NOT step_output MATCHES "\"rms_norm\"")
  message(FATAL_ERROR "the installed `kernelhub get` listed no rms_norm op:\n${step_output}")
endif()

# A program without LibTorch (kernelhub::fetch alone) downloads and verifies a kernel and loads
# nothing: fetch_kernel, as fetch_kernel.hpp shows it, for the tvm-ffi build of the reference
# kernels that LOCAL_KERNELS names.
if(WITH_TVM_FFI)
  set(fetch_project ${WORK_DIR}/fetch-consumer)
  file(WRITE ${fetch_project}/main.cpp [=[
#include <cstdio>

#include "kernelhub/fetch/fetch_kernel.hpp"

int main() {
  auto environment = kernelhub::resolver::Environment::detect({}, kernelhub::process_environment());
  if (!environment) {
    std::fprintf(stderr, "%s\n", environment.error().message.c_str());
    return 1;
  }
  environment->tvm_ffi = kernelhub::resolver::Version{0, 1};
  try {
    const kernelhub::FetchedKernel kernel = kernelhub::fetch_kernel(
        "kernelhub/reference-kernels", *environment, kernelhub::resolver::Loadable::torch_free_process());
    std::printf("fetched %s (%s) at %s\n", kernel.variant().c_str(), kernel.revision().c_str(), kernel.path().c_str());
  } catch (const kernelhub::KernelhubError& e) {
    std::fprintf(stderr, "fetch-consumer: %s\n", e.what());
    return 1;
  }
  try {  // the same typed exceptions as get_kernel
    kernelhub::fetch_kernel("kernelhub/reference-kernels", *environment,
                            kernelhub::resolver::Loadable::torch_free_process(), {.revision = "main", .version = 1});
  } catch (const kernelhub::InvalidArgumentError& e) {
    std::printf("refused: %s\n", e.what());
    return 0;
  }
  return 1;
}
]=])
  file(WRITE ${fetch_project}/CMakeLists.txt
       "cmake_minimum_required(VERSION 3.25)\nproject(fetch_consumer LANGUAGES CXX)\n"
       "find_package(kernelhub CONFIG REQUIRED COMPONENTS fetch)\n"
       "add_executable(fetch-consumer main.cpp)\ntarget_link_libraries(fetch-consumer PRIVATE kernelhub::fetch)\n")
  step("configuring the torch-free consumer" ${CMAKE_COMMAND} -S ${fetch_project} -B ${fetch_project}/build
       -G ${GENERATOR} -DCMAKE_PREFIX_PATH=${prefix})
  step("building the torch-free consumer" ${CMAKE_COMMAND} --build ${fetch_project}/build)
  step("running the torch-free consumer (LOCAL_KERNELS)" ${CMAKE_COMMAND} -E env
       LOCAL_KERNELS=kernelhub/reference-kernels=${KERNEL_DIR} ${fetch_project}/build/fetch-consumer)
  if(NOT step_output MATCHES "fetched tvm-ffi01-cpu-[^ ]+ \\(local\\) at " OR NOT step_output MATCHES "refused: .*revision")
    message(FATAL_ERROR "the torch-free consumer did not fetch the reference kernels' tvm-ffi build:\n${step_output}")
  endif()
endif()

# A version the package does not satisfy is CMake's own version error.
file(WRITE ${WORK_DIR}/too-new/CMakeLists.txt
     "cmake_minimum_required(VERSION 3.25)\nproject(too_new LANGUAGES CXX)\nfind_package(kernelhub 9.0 CONFIG REQUIRED)\n")
execute_process(COMMAND ${CMAKE_COMMAND} -S ${WORK_DIR}/too-new -B ${WORK_DIR}/too-new/build -DCMAKE_PREFIX_PATH=${prefix}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT "${out}${err}" MATCHES "version: 0\\.1")
  message(FATAL_ERROR "find_package(kernelhub 9.0) did not fail on the version:\n${out}\n${err}")
endif()

step("configuring the consumer" ${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/consumer -B ${WORK_DIR}/build
     -G ${GENERATOR} -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${prefix} -DPython3_EXECUTABLE=${PYTHON})
step("building the consumer" ${CMAKE_COMMAND} --build ${WORK_DIR}/build)
step("running the consumer" ${WORK_DIR}/build/consumer ${KERNEL_DIR})
message(STATUS "${step_output}")
if(NOT step_output MATCHES "rms_norm max error")
  message(FATAL_ERROR "the consumer did not report its check:\n${step_output}")
endif()

# The README's C++ snippet and CMake lines, verbatim (so the two cannot drift): the first ```cpp
# block after "## From C++" is main.cpp; the first ```cmake block after "### In your CMake project"
# follows add_executable(app main.cpp) in a project that sets no C++ standard of its own (the
# package's targets carry C++20 and everything else a consumer needs).
file(READ ${SOURCE_DIR}/README.md readme)
function(readme_block heading fence out)
  string(FIND "${readme}" "\n${heading}\n" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "README.md has no heading `${heading}`")
  endif()
  string(SUBSTRING "${readme}" ${at} -1 rest)
  string(FIND "${rest}" "\n```${fence}\n" start)
  if(start EQUAL -1)
    message(FATAL_ERROR "README.md has no ```${fence} block after `${heading}`")
  endif()
  string(LENGTH "\n```${fence}\n" fence_length)
  math(EXPR start "${start} + ${fence_length}")
  string(SUBSTRING "${rest}" ${start} -1 rest)
  string(FIND "${rest}" "\n```" end)
  string(SUBSTRING "${rest}" 0 ${end} block)
  set(${out} "${block}\n" PARENT_SCOPE)
endfunction()
readme_block("## From C++" cpp snippet)
readme_block("### In your CMake project" cmake cmake_lines)
set(readme_project ${WORK_DIR}/readme)
file(WRITE ${readme_project}/main.cpp "${snippet}")
file(WRITE ${readme_project}/CMakeLists.txt
     "cmake_minimum_required(VERSION 3.25)\nproject(readme_snippet LANGUAGES CXX)\nadd_executable(app main.cpp)\n${cmake_lines}")
step("configuring the README's snippet" ${CMAKE_COMMAND} -S ${readme_project} -B ${readme_project}/build
     -G ${GENERATOR} -DCMAKE_PREFIX_PATH=${prefix} -DPython3_EXECUTABLE=${PYTHON})
step("building the README's snippet" ${CMAKE_COMMAND} --build ${readme_project}/build)
step("running the README's snippet (LOCAL_KERNELS, offline)" ${CMAKE_COMMAND} -E env
     LOCAL_KERNELS=kernelhub/reference-kernels=${KERNEL_DIR} HF_HUB_OFFLINE=1 ${readme_project}/build/app)

# A consumer with no Python (nor Torch_DIR) is told at find_package how to point CMake at LibTorch.
execute_process(COMMAND ${CMAKE_COMMAND} -S ${readme_project} -B ${readme_project}/no-python -G ${GENERATOR}
                        -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_DISABLE_FIND_PACKAGE_Python3=TRUE
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(REGEX REPLACE "[ \n]+" " " said "${err}")
if(rc EQUAL 0 OR NOT said MATCHES "needs LibTorch" OR NOT said MATCHES "-DTorch_DIR=<libtorch>/share/cmake/Torch"
   OR NOT said MATCHES "-DPython3_EXECUTABLE" OR said MATCHES "bootstrap")
  message(FATAL_ERROR "without a Python, find_package(kernelhub) did not say how to point CMake at LibTorch:\n${out}\n${err}")
endif()
