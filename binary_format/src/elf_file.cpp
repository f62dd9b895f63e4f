#include "kernelhub/binary_format/internal/elf_file.hpp"

#include "mapped_file.hpp"

#include <elf.h>

#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace kernelhub::binary_format {

namespace {

Unexpected corrupt(std::string_view why) {
  return unexpected(ErrorCode::kCorruptFile, "not a valid ELF shared library: " + std::string(why));
}

// Bounds-checked view of the file.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}

  template <typename T>
  bool read(std::uint64_t offset, T& out) const {
    if (offset > bytes_.size() || bytes_.size() - offset < sizeof(T)) return false;
    std::memcpy(&out, bytes_.data() + offset, sizeof(T));
    return true;
  }
  bool in_bounds(std::uint64_t offset, std::uint64_t size) const {
    return offset <= bytes_.size() && size <= bytes_.size() - offset;
  }
  std::string_view slice(std::uint64_t offset, std::uint64_t size) const { return bytes_.substr(offset, size); }

 private:
  std::string_view bytes_;
};

// A NUL-terminated string inside a string table; empty if out of range or unterminated.
std::string string_at(std::string_view table, std::uint64_t offset) {
  if (offset >= table.size()) return {};
  const std::size_t end = table.find('\0', offset);
  if (end == std::string_view::npos) return {};
  return std::string(table.substr(offset, end - offset));
}

struct Sections {
  std::vector<Elf64_Shdr> headers;
  std::vector<std::string> names;
};

Result<Sections> read_sections(const Reader& r, const Elf64_Ehdr& eh) {
  Sections s;
  if (eh.e_shnum == 0) return s;
  if (eh.e_shentsize != sizeof(Elf64_Shdr)) return corrupt("unexpected section header size");
  if (!r.in_bounds(eh.e_shoff, std::uint64_t{eh.e_shnum} * sizeof(Elf64_Shdr))) {
    return corrupt("section headers lie outside the file (truncated?)");
  }
  s.headers.resize(eh.e_shnum);
  for (std::uint16_t i = 0; i < eh.e_shnum; ++i) r.read(eh.e_shoff + i * sizeof(Elf64_Shdr), s.headers[i]);
  std::string_view shstr;
  if (eh.e_shstrndx < eh.e_shnum) {
    const auto& h = s.headers[eh.e_shstrndx];
    if (!r.in_bounds(h.sh_offset, h.sh_size)) return corrupt("section name table lies outside the file");
    shstr = r.slice(h.sh_offset, h.sh_size);
  }
  for (const auto& h : s.headers) s.names.push_back(string_at(shstr, h.sh_name));
  return s;
}

const Elf64_Shdr* find_type(const Sections& s, std::uint32_t type) {
  for (const auto& h : s.headers) {
    if (h.sh_type == type) return &h;
  }
  return nullptr;
}

Result<std::string_view> section_data(const Reader& r, const Elf64_Shdr& h) {
  if (h.sh_type == SHT_NOBITS) return std::string_view{};
  if (!r.in_bounds(h.sh_offset, h.sh_size)) return corrupt("a section lies outside the file (truncated?)");
  return r.slice(h.sh_offset, h.sh_size);
}

Result<std::string_view> linked_strings(const Reader& r, const Sections& s, const Elf64_Shdr& h) {
  if (h.sh_link >= s.headers.size()) return corrupt("a section links to a missing string table");
  return section_data(r, s.headers[h.sh_link]);
}

// The section of `type` (the first), its bytes and the string table it links to; nullopt when the
// file has none.
struct LinkedSection {
  const Elf64_Shdr* header;
  std::string_view data;
  std::string_view strings;
};

Result<std::optional<LinkedSection>> find_linked(const Reader& r, const Sections& sections, std::uint32_t type) {
  const Elf64_Shdr* header = find_type(sections, type);
  if (header == nullptr) return std::optional<LinkedSection>();
  KH_ASSIGN_OR_RETURN(std::string_view data, section_data(r, *header));
  KH_ASSIGN_OR_RETURN(std::string_view strings, linked_strings(r, sections, *header));
  return std::optional<LinkedSection>(LinkedSection{header, data, strings});
}

// The dynamic section's NEEDED, RUNPATH (RPATH where there is no RUNPATH), SONAME and FLAGS.
Status read_dynamic(const Reader& r, const Sections& sections, ElfFile& elf) {
  KH_ASSIGN_OR_RETURN(const std::optional<LinkedSection> found, find_linked(r, sections, SHT_DYNAMIC));
  if (!found) return {};
  const std::string_view data = found->data;
  const std::string_view strings = found->strings;
  const Reader dr(data);
  std::vector<std::string> rpath;
  for (std::uint64_t off = 0; off + sizeof(Elf64_Dyn) <= data.size(); off += sizeof(Elf64_Dyn)) {
    Elf64_Dyn d{};
    dr.read(off, d);
    if (d.d_tag == DT_NULL) break;
    switch (d.d_tag) {
      case DT_NEEDED: elf.needed.push_back(string_at(strings, d.d_un.d_val)); break;
      case DT_SONAME: elf.soname = string_at(strings, d.d_un.d_val); break;
      case DT_RUNPATH: elf.runpath.push_back(string_at(strings, d.d_un.d_val)); break;
      case DT_RPATH: rpath.push_back(string_at(strings, d.d_un.d_val)); break;
      case DT_BIND_NOW: elf.bind_now = true; break;
      case DT_FLAGS: elf.bind_now |= (d.d_un.d_val & DF_BIND_NOW) != 0; break;
      case DT_FLAGS_1: elf.bind_now |= (d.d_un.d_val & DF_1_NOW) != 0; break;
      default: break;
    }
  }
  if (elf.runpath.empty()) elf.runpath = rpath;
  return {};
}

// Versions needed (.gnu.version_r): index → (version name, library).
using NeededVersions = std::map<std::uint16_t, std::pair<std::string, std::string>>;

Result<NeededVersions> read_needed_versions(const Reader& r, const Sections& sections) {
  NeededVersions needed_versions;
  KH_ASSIGN_OR_RETURN(const std::optional<LinkedSection> found, find_linked(r, sections, SHT_GNU_verneed));
  if (!found) return needed_versions;
  const std::string_view data = found->data;
  const std::string_view strings = found->strings;
  const Reader vrr(data);
  std::uint64_t off = 0;
  for (std::uint64_t n = 0; n < found->header->sh_info && n < 4096; ++n) {
    Elf64_Verneed need{};
    if (!vrr.read(off, need)) return corrupt("truncated version requirements");
    const std::string library = string_at(strings, need.vn_file);
    std::uint64_t aoff = off + need.vn_aux;
    for (std::uint16_t a = 0; a < need.vn_cnt; ++a) {
      Elf64_Vernaux aux{};
      if (!vrr.read(aoff, aux)) return corrupt("truncated version requirements");
      needed_versions[aux.vna_other & 0x7fff] = {string_at(strings, aux.vna_name), library};
      if (aux.vna_next == 0) break;
      aoff += aux.vna_next;
    }
    if (need.vn_next == 0) break;
    off += need.vn_next;
  }
  return needed_versions;
}

// Versions defined (.gnu.version_d): index → name; the names but the base one go in
// `elf.defined_versions`.
using DefinedVersions = std::map<std::uint16_t, std::string>;

Result<DefinedVersions> read_defined_versions(const Reader& r, const Sections& sections, ElfFile& elf) {
  DefinedVersions defined_versions;
  KH_ASSIGN_OR_RETURN(const std::optional<LinkedSection> found, find_linked(r, sections, SHT_GNU_verdef));
  if (!found) return defined_versions;
  const std::string_view data = found->data;
  const std::string_view strings = found->strings;
  const Reader vdr(data);
  std::uint64_t off = 0;
  for (std::uint64_t n = 0; n < found->header->sh_info && n < 65536; ++n) {
    Elf64_Verdef def{};
    if (!vdr.read(off, def)) return corrupt("truncated version definitions");
    Elf64_Verdaux aux{};
    if (def.vd_cnt > 0 && vdr.read(off + def.vd_aux, aux)) {
      const std::string name = string_at(strings, aux.vda_name);
      defined_versions[def.vd_ndx & 0x7fff] = name;
      if ((def.vd_flags & VER_FLG_BASE) == 0) elf.defined_versions.push_back(name);
    }
    if (def.vd_next == 0) break;
    off += def.vd_next;
  }
  return defined_versions;
}

// Dynamic relocations: the kinds the dynamic linker must apply, sorted.
Result<std::vector<std::uint32_t>> read_relocation_types(const Reader& r, const Sections& sections) {
  std::set<std::uint32_t> relocation_types;
  for (const auto& h : sections.headers) {
    if ((h.sh_type != SHT_RELA && h.sh_type != SHT_REL) || (h.sh_flags & SHF_ALLOC) == 0) continue;
    const std::uint64_t entry = h.sh_type == SHT_RELA ? sizeof(Elf64_Rela) : sizeof(Elf64_Rel);
    KH_ASSIGN_OR_RETURN(std::string_view data, section_data(r, h));
    const Reader rr(data);
    for (std::uint64_t off = 0; off + entry <= data.size(); off += entry) {
      Elf64_Rel rel{};  // r_info at the same offset in both kinds
      rr.read(off, rel);
      relocation_types.insert(static_cast<std::uint32_t>(ELF64_R_TYPE(rel.r_info)));
    }
  }
  return std::vector<std::uint32_t>(relocation_types.begin(), relocation_types.end());
}

// Dynamic symbols with their versions (needed ones with their library).
Status read_symbols(const Reader& r, const Sections& sections, const NeededVersions& needed_versions,
                    const DefinedVersions& defined_versions, ElfFile& elf) {
  KH_ASSIGN_OR_RETURN(const std::optional<LinkedSection> found, find_linked(r, sections, SHT_DYNSYM));
  if (!found) return {};
  const std::string_view data = found->data;
  const std::string_view strings = found->strings;
  std::string_view versym;
  if (const Elf64_Shdr* vs = find_type(sections, SHT_GNU_versym)) {
    KH_ASSIGN_OR_RETURN(versym, section_data(r, *vs));
  }
  const Reader sr(data);
  const Reader vr(versym);
  const std::uint64_t count = data.size() / sizeof(Elf64_Sym);
  elf.symbols.reserve(count);
  for (std::uint64_t i = 1; i < count; ++i) {
    Elf64_Sym sym{};
    sr.read(i * sizeof(Elf64_Sym), sym);
    ElfSymbol out;
    out.name = string_at(strings, sym.st_name);
    if (out.name.empty()) continue;
    out.defined = sym.st_shndx != SHN_UNDEF;
    out.weak = ELF64_ST_BIND(sym.st_info) == STB_WEAK;
    std::uint16_t ver = 0;
    if (vr.read(i * sizeof(std::uint16_t), ver)) {
      ver &= 0x7fff;
      if (auto it = needed_versions.find(ver); it != needed_versions.end()) {
        out.version = it->second.first;
        out.library = it->second.second;
      } else if (auto dit = defined_versions.find(ver); dit != defined_versions.end() && ver > 1) {
        out.version = dit->second;
      }
    }
    elf.symbols.push_back(std::move(out));
  }
  return {};
}

}  // namespace

Result<ElfFile> ElfFile::read(const std::filesystem::path& path, ElfParts parts) {
  KH_ASSIGN_OR_RETURN(MappedFile file, MappedFile::open(path));
  auto elf = parse(file.bytes(), parts);
  if (!elf) return unexpected(elf.error().with_context("`" + path.string() + "`"));
  return elf;
}

Result<ElfFile> ElfFile::parse(std::string_view bytes, ElfParts parts) {
  const Reader r(bytes);
  Elf64_Ehdr eh{};
  if (bytes.size() < EI_NIDENT || std::memcmp(bytes.data(), ELFMAG, SELFMAG) != 0) {
    return corrupt("the file does not start with the ELF magic bytes");
  }
  ElfFile elf;
  elf.is_64bit = bytes[EI_CLASS] == ELFCLASS64;
  elf.little_endian = bytes[EI_DATA] == ELFDATA2LSB;
  elf.os_abi = static_cast<std::uint8_t>(bytes[EI_OSABI]);
  if (!elf.is_64bit || !elf.little_endian) {
    // Still report what it is, so the pre-flight can say "for another machine".
    std::uint16_t machine = 0;
    r.read(18, machine);
    elf.machine = machine;
    return elf;
  }
  if (!r.read(0, eh)) return corrupt("the ELF header is truncated");
  elf.machine = eh.e_machine;
  elf.type = eh.e_type;

  KH_ASSIGN_OR_RETURN(Sections sections, read_sections(r, eh));
  elf.sections = sections.names;
  KH_RETURN_IF_ERROR(read_dynamic(r, sections, elf));
  KH_ASSIGN_OR_RETURN(const NeededVersions needed_versions, read_needed_versions(r, sections));
  KH_ASSIGN_OR_RETURN(const DefinedVersions defined_versions, read_defined_versions(r, sections, elf));
  KH_ASSIGN_OR_RETURN(elf.relocation_types, read_relocation_types(r, sections));
  if (parts == ElfParts::kAll) KH_RETURN_IF_ERROR(read_symbols(r, sections, needed_versions, defined_versions, elf));
  return elf;
}

bool ElfFile::has_section(std::string_view name) const {
  for (const auto& s : sections) {
    if (s == name) return true;
  }
  return false;
}

std::optional<std::string_view> ElfFile::section_bytes(std::string_view file, std::string_view name) {
  const Reader r(file);
  Elf64_Ehdr eh{};
  if (file.size() < EI_NIDENT || std::memcmp(file.data(), ELFMAG, SELFMAG) != 0 || !r.read(0, eh)) {
    return std::nullopt;
  }
  auto sections = read_sections(r, eh);
  if (!sections) return std::nullopt;
  for (std::size_t i = 0; i < sections->names.size(); ++i) {
    if (sections->names[i] == name) {
      auto data = section_data(r, sections->headers[i]);
      if (data) return *data;
    }
  }
  return std::nullopt;
}

std::string_view dynamic_relocation_name(std::uint16_t machine, std::uint32_t type) {
  // What glibc's elf_machine_rela applies (sysdeps/x86_64/dl-machine.h, sysdeps/aarch64/dl-machine.h).
  if (machine == EM_X86_64) {
    switch (type) {
      case R_X86_64_NONE: return "R_X86_64_NONE";
      case R_X86_64_64: return "R_X86_64_64";
      case R_X86_64_PC32: return "R_X86_64_PC32";
      case R_X86_64_32: return "R_X86_64_32";
      case R_X86_64_COPY: return "R_X86_64_COPY";
      case R_X86_64_GLOB_DAT: return "R_X86_64_GLOB_DAT";
      case R_X86_64_JUMP_SLOT: return "R_X86_64_JUMP_SLOT";
      case R_X86_64_RELATIVE: return "R_X86_64_RELATIVE";
      case R_X86_64_DTPMOD64: return "R_X86_64_DTPMOD64";
      case R_X86_64_DTPOFF64: return "R_X86_64_DTPOFF64";
      case R_X86_64_TPOFF64: return "R_X86_64_TPOFF64";
      case R_X86_64_SIZE32: return "R_X86_64_SIZE32";
      case R_X86_64_SIZE64: return "R_X86_64_SIZE64";
      case R_X86_64_TLSDESC: return "R_X86_64_TLSDESC";
      case R_X86_64_IRELATIVE: return "R_X86_64_IRELATIVE";
      case R_X86_64_RELATIVE64: return "R_X86_64_RELATIVE64";
      default: return {};
    }
  }
  if (machine == EM_AARCH64) {
    switch (type) {
      case R_AARCH64_NONE: return "R_AARCH64_NONE";
      case R_AARCH64_ABS64: return "R_AARCH64_ABS64";
      case R_AARCH64_COPY: return "R_AARCH64_COPY";
      case R_AARCH64_GLOB_DAT: return "R_AARCH64_GLOB_DAT";
      case R_AARCH64_JUMP_SLOT: return "R_AARCH64_JUMP_SLOT";
      case R_AARCH64_RELATIVE: return "R_AARCH64_RELATIVE";
      case R_AARCH64_TLS_DTPMOD: return "R_AARCH64_TLS_DTPMOD";
      case R_AARCH64_TLS_DTPREL: return "R_AARCH64_TLS_DTPREL";
      case R_AARCH64_TLS_TPREL: return "R_AARCH64_TLS_TPREL";
      case R_AARCH64_TLSDESC: return "R_AARCH64_TLSDESC";
      case R_AARCH64_IRELATIVE: return "R_AARCH64_IRELATIVE";
      default: return {};
    }
  }
  return {};
}

std::string_view machine_name(std::uint16_t machine) {
  switch (machine) {
    case EM_X86_64: return "x86_64";
    case EM_AARCH64: return "aarch64";
    case EM_386: return "i386";
    case EM_ARM: return "arm";
    case EM_PPC64: return "ppc64";
    case EM_RISCV: return "riscv";
    case EM_S390: return "s390";
    default: return "unknown";
  }
}

}  // namespace kernelhub::binary_format
