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
set(kh_torch_free_targets kernelhub_base kernelhub_resolver kernelhub_client kernelhub_signing
                          kernelhub_sigstore kernelhub_binary_format kernelhub_fetch)
install(TARGETS ${kh_torch_free_targets} EXPORT kernelhubTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT cpp)
set(kh_layers base resolver client signing sigstore fetch)
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
  install(TARGETS kernelhub RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT cpp)
endif()
if(TARGET kernelhub-get)
  # kernelhub runs kernelhub-get for `kernelhub get`, from its own folder. Only kernelhub-get links
  # LibTorch: it finds the one it was built against where that torch lives, so it runs installed.
  set_target_properties(kernelhub-get PROPERTIES INSTALL_RPATH "${KERNELHUB_TORCH_LIB_DIR};${_kh_nvidia_lib_dirs}")
  install(TARGETS kernelhub-get RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT cpp)
endif()
