// Pre-flight: can this process load a shared library, decided from the ELF file before dlopen.
//
// Checks, each reported with what is wrong and what would fix it:
//   - the file checks (file_checks.hpp): machine, NEEDED libraries, glibc and libstdc++ versions;
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
#include "kernelhub/binary_format/internal/elf_file.hpp"
#include "kernelhub/binary_format/internal/file_checks.hpp"

namespace kernelhub::loader {

// The checks against what is loaded: torch C++ and stable-ABI symbols, Python symbols. Adds to
// `report`. Run after report.torch_libraries are loaded.
void check_symbols(const binary_format::ElfFile& elf, binary_format::PreflightReport& report);

// Both phases on a file. Nothing is loaded when the file checks fail; when they pass, the torch
// libraries it needs are loaded (what `import torch` loads, never the file itself) and its
// symbols are checked. `elf`: the file's ELF when the caller already parsed it (else it is read).
// Errors: kNotFound, kCorruptFile, kIncompatibleBinary (every problem listed), kLoadFailed (a
// torch library would not load).
Result<binary_format::PreflightReport> check_loadable(const std::filesystem::path& path, const EnvironmentSource& env,
                                                      const binary_format::ElfFile* elf = nullptr);

}  // namespace kernelhub::loader
