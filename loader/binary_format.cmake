# kernelhub_binary_format: the ELF and CUDA fatbinary readers and the op schema text reader. Pure
# parsing with no LibTorch, so that the fuzzers (fuzz/), the torch-free CLI and the loader share one
# definition; the loader links it.
# Included by loader/CMakeLists.txt and by fuzz/CMakeLists.txt.
add_library(kernelhub_binary_format STATIC
  ${CMAKE_CURRENT_LIST_DIR}/src/elf_file.cpp ${CMAKE_CURRENT_LIST_DIR}/src/fatbin.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/library_image.cpp ${CMAKE_CURRENT_LIST_DIR}/src/mapped_file.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/op_schema_text.cpp)
add_library(kernelhub::binary_format ALIAS kernelhub_binary_format)
target_include_directories(kernelhub_binary_format
                           PUBLIC $<BUILD_INTERFACE:${CMAKE_CURRENT_LIST_DIR}/include> $<INSTALL_INTERFACE:include>
                           PRIVATE ${CMAKE_CURRENT_LIST_DIR}/src)
set_target_properties(kernelhub_binary_format PROPERTIES EXPORT_NAME binary_format)
target_link_libraries(kernelhub_binary_format PUBLIC kernelhub::base kernelhub::resolver)
kernelhub_target_defaults(kernelhub_binary_format)
