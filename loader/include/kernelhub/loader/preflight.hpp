// Pre-flight: can this process load a shared library, decided from the ELF file before dlopen.
//
// Checks, each reported with what is wrong and what would fix it:
//   - class, byte order and machine match this process (a kernel for another cpu);
//   - every NEEDED library is already loaded or found on the search path (RUNPATH with $ORIGIN,
//     LD_LIBRARY_PATH, ld.so.conf directories, the system directories);
//   - the highest GLIBC_ version needed is at most this system's glibc; every GLIBCXX_/CXXABI_
//     version needed is defined by the libstdc++ this process runs with;
//   - every undefined c10/at/torch symbol is exported by the LibTorch loaded in this process
//     (otherwise the kernel was built for another torch version or C++ ABI);
//   - Python C-API symbols: a process without Python can still load kernel-builder libraries,
//     because kernelhub provides the few abi3 entry points they import (see python_stub.hpp);
//     any other Python symbol is reported.
// All problems are collected, not just the first.
//
// Thread safety: reads process state (loaded libraries) and files; safe from any thread.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "kernelhub/base/environment_source.hpp"
#include "kernelhub/base/result.hpp"
#include "kernelhub/loader/elf_file.hpp"

namespace kernelhub::loader {

struct PreflightReport {
  std::vector<std::string> problems;        // empty: the library can be loaded
  std::vector<std::string> python_symbols;  // Py* symbols it imports
  bool needs_python_stub = false;           // imports Python symbols this process lacks
  bool bind_now = false;
};

// Inspects `elf` (read from `path`) against this process. `env` provides LD_LIBRARY_PATH.
PreflightReport preflight(const std::filesystem::path& path, const ElfFile& elf, const EnvironmentSource& env);

// Reads and checks; Errors: kNotFound, kCorruptFile, kIncompatibleBinary (all problems listed).
Result<PreflightReport> check_loadable(const std::filesystem::path& path, const EnvironmentSource& env);

}  // namespace kernelhub::loader
