// Pre-flight: can this process load a shared library, decided from the ELF file before dlopen.
//
// Checks, each reported with what is wrong and what would fix it:
//   - class, byte order and machine match this process (a kernel for another cpu);
//   - every NEEDED library is already loaded, provided by this process's torch (torch/lib and
//     the CUDA libraries torch itself resolves: torch_libraries.hpp), or found on the search path
//     (RUNPATH with $ORIGIN, LD_LIBRARY_PATH, ld.so.conf directories, the system directories); a
//     torch library this torch lacks means the kernel was built against another torch build;
//   - the highest GLIBC_ version needed is at most this system's glibc; every GLIBCXX_/CXXABI_
//     version needed is defined by the libstdc++ this process runs with;
//   - every undefined c10/at/torch C++ symbol, and every function of torch's stable C ABI
//     (aoti_torch_*, torch_*), is exported by the LibTorch loaded in this process (otherwise the
//     kernel was built for another torch version or C++ ABI, or a newer stable ABI);
//   - Python C-API symbols: a process without Python can still load kernel-builder libraries,
//     because kernelhub provides the few abi3 entry points they import (see python_stub.hpp);
//     any other Python symbol is reported.
// All problems of a phase are collected, not just the first.
//
// Thread safety: reads process state (loaded libraries) and files; safe from any thread.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "kernelhub/base/environment_source.hpp"
#include "kernelhub/base/result.hpp"
#include "kernelhub/loader/elf_file.hpp"
#include "kernelhub/loader/torch_libraries.hpp"

namespace kernelhub::loader {

struct PreflightReport {
  std::vector<std::string> problems;        // empty: the library can be loaded
  std::vector<std::string> python_symbols;  // Py* symbols it imports
  bool needs_python_stub = false;           // imports Python symbols this process lacks
  bool bind_now = false;
  // NEEDED libraries that this process's torch provides and that are not loaded yet, by
  // absolute path: loaded before the symbols are checked and before the kernel.
  std::vector<std::filesystem::path> torch_libraries;
};

// The checks that need nothing loaded: machine, ELF type, NEEDED libraries, symbol versions.
// `env` provides LD_LIBRARY_PATH; `torch` says what this process's torch provides.
PreflightReport check_file(const std::filesystem::path& path, const ElfFile& elf, const EnvironmentSource& env,
                           const TorchLibraries& torch);

// The checks against what is loaded: torch C++ and stable-ABI symbols, Python symbols. Adds to
// `report`. Run after report.torch_libraries are loaded.
void check_symbols(const ElfFile& elf, PreflightReport& report);

// Both phases on a file. Nothing is loaded when the file checks fail; when they pass, the torch
// libraries it needs are loaded (what `import torch` loads, never the file itself) and its
// symbols are checked. `elf`: the file's ELF when the caller already parsed it (else it is read).
// Errors: kNotFound, kCorruptFile, kIncompatibleBinary (every problem listed), kLoadFailed (a
// torch library would not load).
Result<PreflightReport> check_loadable(const std::filesystem::path& path, const EnvironmentSource& env,
                                       const ElfFile* elf = nullptr);

}  // namespace kernelhub::loader
