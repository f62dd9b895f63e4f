// The file checks of the pre-flight: can this process load a shared library, decided from its ELF
// file alone, before anything is loaded. Shared by the torch loader (preflight.hpp, which adds the
// symbol checks against the loaded LibTorch) and the tvm-ffi loader (tvm_ffi_loader/), which links
// no LibTorch.
//
// Checks, each reported with what is wrong and what would fix it:
//   - class, byte order and machine match this process (a kernel for another cpu);
//   - every NEEDED library is already loaded, provided by this process's torch (torch/lib and
//     the CUDA libraries torch itself resolves: torch_libraries.hpp), or found on the search path
//     (RUNPATH with $ORIGIN, LD_LIBRARY_PATH, ld.so.conf directories, the system directories); a
//     torch library this torch lacks means the kernel was built against another torch build;
//   - the highest GLIBC_ version needed is at most this system's glibc; every GLIBCXX_/CXXABI_
//     version needed is defined by the libstdc++ this process runs with.
// All problems are collected, not just the first.
//
// Thread safety: reads process state (loaded libraries) and files; safe from any thread.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernelhub/base/environment_source.hpp"
#include "kernelhub/binary_format/internal/elf_file.hpp"
#include "kernelhub/binary_format/internal/torch_libraries.hpp"

namespace kernelhub::binary_format {

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
// `env` provides LD_LIBRARY_PATH; `torch` says what this process's torch provides (none:
// TorchLibraries{}).
PreflightReport check_file(const std::filesystem::path& path, const ElfFile& elf, const EnvironmentSource& env,
                           const TorchLibraries& torch);

// The RUNPATH (or RPATH) directories of the ELF file at `path`, in order, $ORIGIN expanded.
std::vector<std::filesystem::path> runpath_dirs(const std::filesystem::path& path, const ElfFile& elf);

// Where the dynamic linker would find `soname` for a library without RUNPATH: LD_LIBRARY_PATH (from
// `env`), the ld.so.conf directories, the system directories, in that order, skipping files built
// for another cpu or class. None when absent.
std::optional<std::filesystem::path> find_on_library_path(std::string_view soname, const EnvironmentSource& env);

}  // namespace kernelhub::binary_format
