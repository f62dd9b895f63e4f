// libFuzzer target: a shared library's bytes, as the loader's pre-flight and the fatbinary
// reader see them (binary_format::ElfFile, binary_format::Fatbin::from_elf).
#include <cstdint>
#include <string_view>

#include "kernelhub/binary_format/internal/elf_file.hpp"
#include "kernelhub/binary_format/internal/fatbin.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kernelhub::binary_format;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  if (auto elf = ElfFile::parse(bytes)) {
    (void)elf->has_section(".nv_fatbin");
    (void)machine_name(elf->machine);
  }
  if (auto section = ElfFile::section_bytes(bytes, ".dynstr")) (void)section->size();
  (void)Fatbin::from_elf(bytes);
  return 0;
}
