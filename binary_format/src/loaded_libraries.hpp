// The shared objects mapped into this process (dl_iterate_phdr), for the checks that ask "is
// this library already here?": the pre-flight (NEEDED entries the program already provides) and
// the CUDA half of torch (found next to the loaded libc10.so).
//
// Thread safety: dl_iterate_phdr holds the loader lock while it walks; the result is a copy.
#pragma once

#include <map>
#include <string>

namespace kernelhub::binary_format {

// File name → path as the dynamic loader recorded it. The main program (empty name) is left out.
std::map<std::string, std::string> loaded_libraries();

}  // namespace kernelhub::binary_format
