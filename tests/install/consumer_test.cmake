# Run by ctest (tests/install/CMakeLists.txt): BUILD_DIR, SOURCE_DIR, WORK_DIR, PYTHON, GENERATOR,
# KERNEL_DIR. Fails (FATAL_ERROR) with the step's output when a step fails.
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
foreach(file lib/cmake/kernelhub/kernelhubConfig.cmake lib/cmake/kernelhub/kernelhubConfigVersion.cmake
             include/kernelhub/kernelhub.hpp include/kernelhub/fetch.hpp lib/libkernelhub_kernelhub.a bin/kernelhub
             bin/kernelhub-get)
  if(NOT EXISTS ${prefix}/${file})
    message(FATAL_ERROR "the install has no ${file}")
  endif()
endforeach()

step("the installed CLI" ${prefix}/bin/kernelhub --help)
# `kernelhub get` runs the installed kernelhub-get beside it, which finds its LibTorch (INSTALL_RPATH).
step("the installed `kernelhub get`" ${CMAKE_COMMAND} -E env LOCAL_KERNELS=kernelhub/reference-kernels=${KERNEL_DIR}
     ${prefix}/bin/kernelhub get kernelhub/reference-kernels --json)
if(NOT step_output MATCHES "\"rms_norm\"")
  message(FATAL_ERROR "the installed `kernelhub get` listed no rms_norm op:\n${step_output}")
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
