// Fatbin: the CUDA device code a shared library carries, listed from its `.nv_fatbin` section
// without a CUDA toolkit or a GPU.
//
// Container layout (NVIDIA does not document it; this is what
// open-source parsers agree on and what nvcc 13.0 writes, checked against cuobjdump):
//   section   one or more fatbins back to back, zero padding allowed between them
//   fatbin    u32 magic 0xBA55ED50, u16 version (1), u16 header size (16), u64 size of the
//             entries that follow the header
//   entry     u16 kind (1 = PTX, 2 = ELF cubin, 4 = legacy cubin), u16 version, u32 header size
//             (>= 64; skipped by its declared size), u64 payload size, u32 compressed size,
//             u32 -, u16 minor, u16 major (PTX: the PTX ISA version), u32 arch (SM number: 90,
//             100, 120), u32 name offset, u32 name size, u64 flags, u64 -, u64 uncompressed size
//   flags     0x1000 | 0x2000 (LZ4) | 0x8000 (zstd, `-compress-mode=size`): compressed;
//             0x100000: an `a` target (sm_90a); 0x200000: an `f` target (sm_100f)
// Compressed payloads are not decompressed: every field used here is in the entry header.
//
// Every size and offset is bounds-checked and every step moves forward by at least one header,
// so truncated or lying input gives kCorruptFile, never a crash, an over-read or a hang.
//
// Thread safety: pure functions over bytes; the result owns nothing from the input.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string_view>
#include <vector>

#include "kernelhub/base/result.hpp"
#include "kernelhub/binary_format/internal/elf_file.hpp"
#include "kernelhub/resolver/cuda_target.hpp"

namespace kernelhub::binary_format {

struct FatbinEntry {
  // Kind (SASS or PTX), arch, `a`/`f` suffix, and for PTX the ISA version (`.version`).
  resolver::CudaTarget target;
  bool compressed = false;
  std::uint64_t size = 0;               // payload bytes as stored (compressed size when compressed)
  std::uint64_t uncompressed_size = 0;  // the payload once decompressed; == size when not compressed
  std::uint64_t flags = 0;              // the raw entry flags, for diagnostics
};

struct Fatbin {
  // Lists the entries of a `.nv_fatbin` section's bytes, in file order (duplicates kept: a
  // library often holds one fatbin per translation unit). Empty bytes give an empty list.
  // Errors: kCorruptFile (bad magic, unsupported version, truncated or inconsistent sizes,
  // unknown entry kind, implausible arch).
  static Result<std::vector<FatbinEntry>> parse(std::string_view section);

  // Lists the device code of a whole ELF shared library given as bytes: the entries of its
  // `.nv_fatbin` and `__nv_relfatbin` sections; empty for a library without them (a CPU build).
  // Errors: kCorruptFile (not a valid ELF file, or a corrupt fatbin, naming the section).
  static Result<std::vector<FatbinEntry>> from_elf(std::string_view file);
  // The same for a file whose ELF was already parsed into `elf` (one parse serves the pre-flight).
  static Result<std::vector<FatbinEntry>> from_elf(const ElfFile& elf, std::string_view file);

  // from_elf() on a file. Reads the disk. Errors: kNotFound/kIo (cannot open), kCorruptFile.
  static Result<std::vector<FatbinEntry>> read(const std::filesystem::path& path);
};

// The targets of `entries`, for resolver::fit_gpus.
std::vector<resolver::CudaTarget> targets_of(const std::vector<FatbinEntry>& entries);

}  // namespace kernelhub::binary_format
