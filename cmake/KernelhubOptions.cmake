# kernelhub_target_defaults(<target>): the warning and sanitizer policy for our own code.
# Third-party headers (torch, curl, json) come in as SYSTEM includes, so -Werror applies to
# what we write and not to what we depend on.
function(kernelhub_target_defaults target)
  if(KERNELHUB_DEVELOPER)
    target_compile_options(${target} PRIVATE -Wall -Wextra -Werror -Wno-unused-parameter
                                             -Wno-missing-field-initializers)
    # GCC 12 and 13 at -O3 (Release) report false -Wrestrict inside libstdc++'s string append
    # whenever a literal is added to a std::string (GCC bug 105329): not ours to fix, and it must
    # not stop a Release build.
    target_compile_options(${target} PRIVATE
      $<$<AND:$<CONFIG:Release>,$<CXX_COMPILER_ID:GNU>,$<VERSION_LESS:$<CXX_COMPILER_VERSION>,14>>:-Wno-restrict>)
  endif()
  if(KERNELHUB_SANITIZE)
    # GCC 12 reports false -Wmaybe-uninitialized inside libstdc++ (std::regex, std::function)
    # once ASan instruments them; the sanitizers themselves check what that warning guesses at.
    target_compile_options(${target} PRIVATE -fsanitize=${KERNELHUB_SANITIZE} -fno-omit-frame-pointer
                                             -fno-sanitize-recover=all -Wno-maybe-uninitialized)
    target_link_options(${target} PRIVATE -fsanitize=${KERNELHUB_SANITIZE})
  endif()
endfunction()

# kernelhub_layer(<name> SOURCES ... LINK_PUBLIC ... LINK_PRIVATE ...): one folder, one target,
# one namespace per layer. Its headers: <name>/include/ the public API, installed with the package
# (cmake/KernelhubInstall.cmake); <name>/internal/ those the layers above use, never installed
# (included as kernelhub/<name>/internal/x.hpp);
# <name>/src/ the layer's own. Installed as kernelhub::<name>.
# The include directories of a layer's target, from the layer's folder `dir`.
function(kernelhub_layer_headers target dir)
  foreach(kind include internal)
    if(EXISTS ${dir}/${kind})
      target_include_directories(${target} PUBLIC $<BUILD_INTERFACE:${dir}/${kind}>)
    endif()
  endforeach()
  target_include_directories(${target} PUBLIC $<INSTALL_INTERFACE:include> PRIVATE ${dir}/src)
endfunction()

function(kernelhub_layer name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LINK_PUBLIC;LINK_PRIVATE" ${ARGN})
  add_library(kernelhub_${name} STATIC ${ARG_SOURCES})
  add_library(kernelhub::${name} ALIAS kernelhub_${name})
  set_target_properties(kernelhub_${name} PROPERTIES EXPORT_NAME ${name})
  kernelhub_layer_headers(kernelhub_${name} ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(kernelhub_${name} PUBLIC ${ARG_LINK_PUBLIC} PRIVATE ${ARG_LINK_PRIVATE})
  # The headers are C++20: a consumer that links the target compiles as C++20 too.
  target_compile_features(kernelhub_${name} PUBLIC cxx_std_20)
  kernelhub_target_defaults(kernelhub_${name})
endfunction()
