// Reading the dynamic linker's path lists (RUNPATH/RPATH, LD_LIBRARY_PATH), shared by the
// pre-flight and the torch library lookup.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kernelhub::binary_format {

// "a::b:" → {"a", "b"}: a colon-separated list without its empty entries.
std::vector<std::string> split_path_list(std::string_view text);

// `dir` with $ORIGIN / ${ORIGIN} replaced by `origin` (the directory of the library that names it).
std::string expand_origin(std::string dir, const std::string& origin);

}  // namespace kernelhub::binary_format
