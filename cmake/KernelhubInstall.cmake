# The C++ package: `cmake --install <build> --prefix P` puts the headers, the static libraries and
# kernelhubConfig.cmake + kernelhubConfigVersion.cmake under P; then
#   find_package(kernelhub CONFIG)  →  kernelhub::kernelhub (get_kernel; finds Torch)
#                                       kernelhub::fetch (resolve, download, verify; no torch)
#                                       kernelhub::sigstore (Sigstore bundles; no torch)
# The torch-free layers are one export set, those that link LibTorch another, read only when
# Torch is found (find_dependency), so a consumer without torch can still use kernelhub::fetch.
include(CMakePackageConfigHelpers)
include(GNUInstallDirs)

set(kh_config_dir ${CMAKE_INSTALL_LIBDIR}/cmake/kernelhub)
set(kh_runtime_dir ${CMAKE_INSTALL_LIBDIR}/kernelhub)  # the TVM-FFI runtime the package carries
set(kh_torch_free_targets kernelhub_base kernelhub_resolver kernelhub_client kernelhub_signing
                          kernelhub_sigstore kernelhub_binary_format kernelhub_fetch)
install(TARGETS ${kh_torch_free_targets} EXPORT kernelhubTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT cpp)
set(kh_layers base resolver client signing sigstore binary_format fetch)
# The package's components (find_package(kernelhub COMPONENTS ...)), each the target
# kernelhub::<component>: the torch-free ones, and those a build with LibTorch adds. The config
# (kernelhubConfig.cmake.in) fails find_package naming any that this install lacks.
set(KERNELHUB_PACKAGE_COMPONENTS fetch sigstore)
set(KERNELHUB_TORCH_COMPONENTS kernelhub)
if(KERNELHUB_WITH_TVM_FFI)
  # The TVM-FFI API, and dlpack.h for its headers (a consumer needs no TVM-FFI or Python to build).
  install(TARGETS kernelhub_dlpack kernelhub_tvm_ffi_loader kernelhub_tvm_ffi EXPORT kernelhubTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT cpp)
  install(FILES ${KERNELHUB_DLPACK_INCLUDE_DIR}/dlpack/dlpack.h
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kernelhub/third_party/dlpack COMPONENT cpp)
  # The runtime the package is built against goes with it, with its license (Apache-2.0: LICENSE
  # and NOTICE with every copy), in lib/kernelhub/, where the installed kernelhub and every program
  # linked with kernelhub::tvm_ffi look (their RUNPATH; tvm_ffi_loader/runtime.hpp): a program runs
  # as built, with no Python on the machine. Without the license files (a runtime not from the
  # wheel), it is not copied, and the programs look where the build found it.
  if(KERNELHUB_TVM_FFI_LICENSES)
    set(KERNELHUB_TVM_FFI_INSTALLED_RUNTIME_DIR "$<INSTALL_PREFIX>/${kh_runtime_dir}")
    install(FILES ${KERNELHUB_TVM_FFI_RUNTIME} DESTINATION ${kh_runtime_dir} COMPONENT cpp)
    install(FILES ${KERNELHUB_TVM_FFI_LICENSES} DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/kernelhub/apache-tvm-ffi
            COMPONENT cpp)
    set(KERNELHUB_TVM_FFI_PACKAGE_RUNTIME "\${PACKAGE_PREFIX_DIR}/${kh_runtime_dir}/libtvm_ffi.so")
  else()
    set(KERNELHUB_TVM_FFI_INSTALLED_RUNTIME_DIR ${KERNELHUB_TVM_FFI_RUNTIME_DIR})
    set(KERNELHUB_TVM_FFI_PACKAGE_RUNTIME ${KERNELHUB_TVM_FFI_RUNTIME})
  endif()
  target_link_options(kernelhub_tvm_ffi_loader INTERFACE
                      "$<INSTALL_INTERFACE:LINKER:-rpath=${KERNELHUB_TVM_FFI_INSTALLED_RUNTIME_DIR}>")
  list(APPEND kh_layers tvm_ffi_loader tvm_ffi)
  list(APPEND KERNELHUB_PACKAGE_COMPONENTS tvm_ffi)
endif()
if(KERNELHUB_WITH_TORCH)
  list(APPEND KERNELHUB_PACKAGE_COMPONENTS ${KERNELHUB_TORCH_COMPONENTS})
endif()
if(KERNELHUB_WITH_TORCH)
  install(TARGETS kernelhub_loader kernelhub_kernelhub EXPORT kernelhubTorchTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT cpp)
  install(EXPORT kernelhubTorchTargets NAMESPACE kernelhub:: DESTINATION ${kh_config_dir} COMPONENT cpp)
  list(APPEND kh_layers loader kernelhub)
endif()
# The headers: each layer's include/ folder, its public API, and nothing else. The libraries above
# are all installed (they are linked), but what their internal/ folders declare is not for users: a
# consumer compiles against kernelhub.hpp, kernelhub/fetch/, tvm_ffi.hpp and what those include
# (tests/install/public_headers.cmake lists them; the install test fails on any other header).
foreach(layer ${kh_layers})
  if(EXISTS ${PROJECT_SOURCE_DIR}/${layer}/include)
    install(DIRECTORY ${PROJECT_SOURCE_DIR}/${layer}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT cpp)
  endif()
endforeach()
install(EXPORT kernelhubTargets NAMESPACE kernelhub:: DESTINATION ${kh_config_dir} COMPONENT cpp)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/kernelhubConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/kernelhubConfig.cmake INSTALL_DESTINATION ${kh_config_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/kernelhubConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/kernelhubConfig.cmake ${PROJECT_BINARY_DIR}/kernelhubConfigVersion.cmake
              ${CMAKE_CURRENT_LIST_DIR}/KernelhubTorch.cmake
        DESTINATION ${kh_config_dir} COMPONENT cpp)
if(TARGET kernelhub)
  if(KERNELHUB_WITH_TVM_FFI)
    # Installed, it finds the runtime the package carries beside it; built, the one it is built against.
    file(RELATIVE_PATH _kh_bin_to_runtime ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}
         ${CMAKE_INSTALL_PREFIX}/${kh_runtime_dir})
    set_target_properties(kernelhub PROPERTIES BUILD_RPATH ${KERNELHUB_TVM_FFI_RUNTIME_DIR}
                                               INSTALL_RPATH "$ORIGIN/${_kh_bin_to_runtime}")
    if(NOT KERNELHUB_TVM_FFI_LICENSES)
      set_target_properties(kernelhub PROPERTIES INSTALL_RPATH ${KERNELHUB_TVM_FFI_RUNTIME_DIR})
    endif()
  endif()
  install(TARGETS kernelhub RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT cpp)
endif()
if(TARGET kernelhub-serve)
  install(TARGETS kernelhub-serve RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT cpp)  # `kernelhub serve`
endif()
if(TARGET kernelhub-get)
  # kernelhub runs kernelhub-get for `kernelhub get`, from its own folder. Only kernelhub-get links
  # LibTorch: it finds the one it was built against where that torch lives, so it runs installed.
  set_target_properties(kernelhub-get PROPERTIES INSTALL_RPATH "${KERNELHUB_TORCH_LIB_DIR};${_kh_nvidia_lib_dirs}")
  install(TARGETS kernelhub-get RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT cpp)
endif()
