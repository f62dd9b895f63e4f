// The Python C-API entry points that kernel-builder libraries import, for processes without
// Python.
//
// A kernel-builder `.abi3.so` defines `PyInit_<ns>` (which calls PyModule_Create2) next to its
// TORCH_LIBRARY registration. Only Python's import ever calls PyInit, so a C++ process never
// needs the function to work, but the dynamic linker must resolve the symbol when the library is
// linked with immediate binding (-z now). kernelhub carries a tiny library defining these
// symbols, embedded in the loader, and loads it RTLD_GLOBAL from a memfd only when the process
// has no Python of its own (a real interpreter's symbols are never shadowed). Each stub function
// fails safely if it is ever called: it returns NULL with no side effects.
#pragma once

#include <string_view>

#include "kernelhub/base/result.hpp"

namespace kernelhub::loader {

// True when `symbol` is one the stub defines.
bool python_stub_provides(std::string_view symbol);

// True when this process already has the Python C API (an interpreter is linked or loaded).
bool process_has_python();

// Loads the stub once per process (later calls are no-ops). Errors: kLoadFailed.
Status ensure_python_stub_loaded();

}  // namespace kernelhub::loader
