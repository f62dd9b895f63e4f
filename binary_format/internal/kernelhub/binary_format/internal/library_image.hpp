// LibraryImage: an op library read once, for every check that looks inside it: its ELF (the
// loader's pre-flight) and its CUDA device code (the GPU fit), parsed from one mapping of the file.
//
// Thread safety: a value type; nothing refers to the mapping after read() returns.
#pragma once

#include <filesystem>
#include <vector>

#include "kernelhub/base/result.hpp"
#include "kernelhub/binary_format/internal/elf_file.hpp"
#include "kernelhub/binary_format/internal/fatbin.hpp"

namespace kernelhub::binary_format {

struct LibraryImage {
  ElfFile elf;
  std::vector<FatbinEntry> device_code;  // empty for a CPU library

  // Errors: kNotFound, kIo (cannot open or map), kCorruptFile (not ELF, or a corrupt fatbin).
  static Result<LibraryImage> read(const std::filesystem::path& path);
  static Result<LibraryImage> parse(std::string_view bytes);
};

}  // namespace kernelhub::binary_format
