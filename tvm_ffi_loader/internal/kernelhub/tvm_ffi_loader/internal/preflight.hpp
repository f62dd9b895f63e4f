// The pre-flight of a TVM-FFI kernel library: can it load into a process without LibTorch or
// Python, decided from its ELF file before anything of it is loaded.
//
//   - it is a tvm-ffi kernel: it exports at least one `__tvm_ffi_<name>` function, and needs no
//     LibTorch (no torch library among its NEEDED, no c10/ATen/torch C++ symbol, no function of
//     torch's stable C ABI): a library that needs LibTorch is a torch build, whatever its variant
//     is called;
//   - it uses no Python C-API function (only a Python process has them);
//   - the file checks of every kernel (binary_format/file_checks.hpp): machine, NEEDED libraries (the
//     TVM-FFI runtime counts once it is open), glibc and libstdc++ versions.
// All problems are listed.
//
// Thread safety: reads files and the list of loaded libraries.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "kernelhub/base/environment_source.hpp"
#include "kernelhub/base/result.hpp"
#include "kernelhub/binary_format/internal/elf_file.hpp"

namespace kernelhub::tvm_ffi_loader {

// The first two checks alone (file-only: a publisher checks them where no runtime is installed).
std::vector<std::string> kind_problems(const binary_format::ElfFile& elf);

// Errors: kIncompatibleBinary listing every problem, with what to do.
Status preflight(const std::filesystem::path& path, const binary_format::ElfFile& elf, const EnvironmentSource& env);

// The names of the TVM-FFI functions a library exports (`__tvm_ffi_<name>`, not the
// `__tvm_ffi__metadata_` and other `__tvm_ffi__` symbols), sorted.
std::vector<std::string> exported_functions(const binary_format::ElfFile& elf);

}  // namespace kernelhub::tvm_ffi_loader
