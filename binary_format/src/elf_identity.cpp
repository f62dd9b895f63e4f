#include "kernelhub/binary_format/internal/elf_identity.hpp"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <optional>
#include <string>

#include "kernelhub/binary_format/internal/elf_file.hpp"

namespace kernelhub::binary_format {

namespace {

Unexpected corrupt(std::string_view why) {
  return unexpected(ErrorCode::kCorruptFile, "not a valid ELF shared library: " + std::string(why));
}

// Where a table of `count` entries of `size` bytes at `offset` ends, or nothing when that
// overflows (a header that lies).
std::optional<std::uint64_t> table_end(std::uint64_t offset, std::uint64_t count, std::uint64_t size) {
  const std::uint64_t bytes = count * size;  // both at most 65535: no overflow
  if (offset > UINT64_MAX - bytes) return std::nullopt;
  return offset + bytes;
}

}  // namespace

Result<ElfIdentity> ElfIdentity::parse(std::string_view header, std::uint64_t file_size) {
  if (header.size() < EI_NIDENT || std::memcmp(header.data(), ELFMAG, SELFMAG) != 0) {
    return corrupt("the file does not start with the ELF magic bytes");
  }
  ElfIdentity id;
  id.is_64bit = header[EI_CLASS] == ELFCLASS64;
  id.little_endian = header[EI_DATA] == ELFDATA2LSB;
  // e_type and e_machine sit at the same offsets in both classes.
  if (header.size() < offsetof(Elf64_Ehdr, e_version)) return corrupt("the ELF header is truncated");
  std::memcpy(&id.type, header.data() + offsetof(Elf64_Ehdr, e_type), sizeof id.type);
  std::memcpy(&id.machine, header.data() + offsetof(Elf64_Ehdr, e_machine), sizeof id.machine);
  if (!id.is_64bit || !id.little_endian) return id;  // another machine's: the caller says so
  if (header.size() < sizeof(Elf64_Ehdr)) return corrupt("the ELF header is truncated");
  Elf64_Ehdr eh;
  std::memcpy(&eh, header.data(), sizeof eh);
  for (const auto& [what, end] : {std::pair{"program headers", table_end(eh.e_phoff, eh.e_phnum, eh.e_phentsize)},
                                  std::pair{"section headers", table_end(eh.e_shoff, eh.e_shnum, eh.e_shentsize)}}) {
    if (!end) return corrupt(std::string("its ") + what + " lie outside any file");
    if (*end > file_size) {
      return corrupt(std::string("it is cut short: its ") + what + " end at byte " + std::to_string(*end) +
                     " but the file has " + std::to_string(file_size) +
                     " bytes (an interrupted download or copy?); download it again");
    }
  }
  return id;
}

Result<ElfIdentity> ElfIdentity::read(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    return unexpected(error == ENOENT ? ErrorCode::kNotFound : ErrorCode::kIo,
                      "cannot open `" + path.string() + "`: " + std::strerror(error));
  }
  char header[sizeof(Elf64_Ehdr)];
  struct stat st {};
  const ssize_t got = ::pread(fd, header, sizeof header, 0);
  const int error = errno;
  const bool stat_ok = ::fstat(fd, &st) == 0;
  ::close(fd);
  if (got < 0 || !stat_ok) {
    return unexpected(ErrorCode::kIo, "cannot read `" + path.string() + "`: " + std::strerror(error));
  }
  auto id = parse(std::string_view(header, static_cast<std::size_t>(got)), static_cast<std::uint64_t>(st.st_size));
  if (!id) return unexpected(id.error().with_context("`" + path.string() + "`"));
  return id;
}

std::uint16_t host_machine() {
#if defined(__x86_64__)
  return EM_X86_64;
#elif defined(__aarch64__)
  return EM_AARCH64;
#else
  return EM_NONE;
#endif
}

std::uint16_t machine_of_cpu(std::string_view cpu) {
  if (cpu == "x86_64") return EM_X86_64;
  if (cpu == "aarch64") return EM_AARCH64;
  return EM_NONE;
}

Status check_variant_machine(const std::filesystem::path& library, const ElfIdentity& elf, std::string_view variant,
                             std::string_view cpu) {
  const std::uint16_t named = machine_of_cpu(cpu);
  if (named == EM_NONE || (elf.is_64bit && elf.little_endian && elf.machine == named)) return {};
  const std::string built = std::string(machine_name(elf.machine)) + (elf.is_64bit ? "" : " (32-bit)");
  return unexpected(ErrorCode::kIncompatibleBinary,
                    "`" + library.string() + "` is built for " + built + ", but its variant `" + std::string(variant) +
                        "` is named for " + std::string(cpu) + " (this machine is " +
                        std::string(machine_name(host_machine())) +
                        "): a mislabelled build, refused before anything of it is loaded; rebuild the variant for " +
                        std::string(cpu) + ", or publish the library under a " + built + " variant name");
}

}  // namespace kernelhub::binary_format
