# kernelhub_binary_format: the ELF and CUDA fatbinary readers, the op schema text reader, and the
# pre-flight's file checks (file_checks.hpp) with what they read of this process (loaded libraries,
# torch's library directories). No LibTorch, so that the fuzzers (fuzz/), the torch-free CLI, the
# torch loader and the tvm-ffi loader share one definition. Included by loader/CMakeLists.txt and by
# fuzz/CMakeLists.txt.
add_library(kernelhub_binary_format STATIC
  ${CMAKE_CURRENT_LIST_DIR}/src/elf_file.cpp ${CMAKE_CURRENT_LIST_DIR}/src/elf_identity.cpp ${CMAKE_CURRENT_LIST_DIR}/src/fatbin.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/library_image.cpp ${CMAKE_CURRENT_LIST_DIR}/src/mapped_file.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/op_schema_text.cpp ${CMAKE_CURRENT_LIST_DIR}/src/file_checks.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/torch_libraries.cpp ${CMAKE_CURRENT_LIST_DIR}/src/library_paths.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/loaded_libraries.cpp)
add_library(kernelhub::binary_format ALIAS kernelhub_binary_format)
kernelhub_layer_headers(kernelhub_binary_format ${CMAKE_CURRENT_LIST_DIR})
set_target_properties(kernelhub_binary_format PROPERTIES EXPORT_NAME binary_format)
target_link_libraries(kernelhub_binary_format PUBLIC kernelhub::base kernelhub::resolver PRIVATE ${CMAKE_DL_LIBS})
kernelhub_target_defaults(kernelhub_binary_format)
