// ElfFile: what a shared library asks of the process that loads it, read from the file itself
// before anything is dlopen'd.
//
// Reads 64-bit little-endian ELF (the only kind a kernel for x86_64 or aarch64 Linux can be):
// header (class, machine, OS ABI, type), the dynamic section (NEEDED, RUNPATH/RPATH, SONAME,
// FLAGS/FLAGS_1 for immediate binding), dynamic symbols (defined and undefined, with the version
// each needs from .gnu.version/.gnu.version_r), the versions it defines (.gnu.version_d), the
// kinds of relocation the dynamic linker must apply (.rela.dyn, .rela.plt), and which sections
// exist (e.g. .nv_fatbin). Every offset is bounds-checked: a truncated or lying
// file gives kCorruptFile, never a crash.
//
// Thread safety: a value type.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernelhub/base/result.hpp"

namespace kernelhub::binary_format {

struct ElfSymbol {
  std::string name;
  std::string version;  // "GLIBC_2.14", empty when unversioned
  std::string library;  // for undefined symbols: the library the version is needed from
  bool defined = false;
  bool weak = false;
};

// What to read: everything, or all but the dynamic symbols (the costly part of a large library:
// libstdc++ has thousands), for a caller that needs the dynamic section or the versions defined.
enum class ElfParts { kAll, kNoSymbols };

struct ElfFile {
  bool is_64bit = false;
  bool little_endian = false;
  std::uint16_t machine = 0;  // EM_X86_64 = 62, EM_AARCH64 = 183
  std::uint8_t os_abi = 0;    // 0 = System V, 3 = GNU/Linux
  std::uint16_t type = 0;     // 3 = ET_DYN
  std::vector<std::string> needed;
  std::vector<std::string> runpath;  // RUNPATH, or RPATH when there is no RUNPATH
  std::string soname;
  bool bind_now = false;  // DT_BIND_NOW, DF_BIND_NOW or DF_1_NOW: every symbol resolved at load
  std::vector<ElfSymbol> symbols;
  std::vector<std::string> defined_versions;  // from .gnu.version_d, e.g. GLIBCXX_3.4.30
  // The relocation types of the dynamic relocations (SHT_RELA/SHT_REL sections loaded with the
  // file), each once, in order: R_X86_64_* or R_AARCH64_* numbers, by `machine`.
  std::vector<std::uint32_t> relocation_types;
  std::vector<std::string> sections;

  // Errors: kNotFound (no such file), kCorruptFile (not ELF, truncated, inconsistent).
  static Result<ElfFile> read(const std::filesystem::path& path, ElfParts parts = ElfParts::kAll);
  static Result<ElfFile> parse(std::string_view bytes, ElfParts parts = ElfParts::kAll);

  bool has_section(std::string_view name) const;
  // The raw bytes of a section, for the fatbinary reader; none when absent.
  static std::optional<std::string_view> section_bytes(std::string_view file, std::string_view name);
};

std::string_view machine_name(std::uint16_t machine);

// "R_AARCH64_GLOB_DAT" for a dynamic relocation type of `machine`; empty for one glibc's dynamic
// linker of that machine does not apply (it would refuse the library at dlopen).
std::string_view dynamic_relocation_name(std::uint16_t machine, std::uint32_t type);

}  // namespace kernelhub::binary_format
