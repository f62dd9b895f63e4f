// ElfIdentity: what an ELF file is built for, from its header alone (its first 64 bytes and the
// file's size), for the checks every load makes before it reads more of a library: the machine
// against the one its variant's name gives, and a file cut short (program or section headers past
// its end: an interrupted download or copy), in every path (C++, the CLI, the Python binding),
// before anything is loaded.
//
// Thread safety: a value type; read() opens the file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string_view>

#include "kernelhub/base/result.hpp"

namespace kernelhub::binary_format {

struct ElfIdentity {
  bool is_64bit = false;
  bool little_endian = false;
  std::uint16_t machine = 0;  // EM_X86_64 = 62, EM_AARCH64 = 183
  std::uint16_t type = 0;     // 3 = ET_DYN

  // Errors: kNotFound, kIo; kCorruptFile (not ELF, or headers past the end of the file).
  static Result<ElfIdentity> read(const std::filesystem::path& path);
  // `header`: the file's first bytes (64 or more; fewer is a file cut short); `file_size`: its size.
  static Result<ElfIdentity> parse(std::string_view header, std::uint64_t file_size);
};

// The ELF machine this process runs on (EM_NONE on a cpu kernelhub knows no variants for).
std::uint16_t host_machine();

// The ELF machine of a variant name's cpu: x86_64 and aarch64; 0 for any other.
std::uint16_t machine_of_cpu(std::string_view cpu);

// A library of the variant `variant`, whose name says `cpu`, built for that cpu (64-bit little
// endian). A mislabelled build (an x86_64 library in a ...-aarch64-linux folder, or the reverse)
// is kIncompatibleBinary naming the library's machine, the name's and this process's. A cpu
// without a known machine is not checked.
Status check_variant_machine(const std::filesystem::path& library, const ElfIdentity& elf, std::string_view variant,
                             std::string_view cpu);

}  // namespace kernelhub::binary_format
