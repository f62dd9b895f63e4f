#include "kernelhub/binary_format/internal/library_image.hpp"

#include "mapped_file.hpp"

namespace kernelhub::binary_format {

Result<LibraryImage> LibraryImage::parse(std::string_view bytes) {
  KH_ASSIGN_OR_RETURN(ElfFile elf, ElfFile::parse(bytes));
  KH_ASSIGN_OR_RETURN(std::vector<FatbinEntry> device_code, Fatbin::from_elf(elf, bytes));
  return LibraryImage{std::move(elf), std::move(device_code)};
}

Result<LibraryImage> LibraryImage::read(const std::filesystem::path& path) {
  KH_ASSIGN_OR_RETURN(MappedFile mapping, MappedFile::open(path));
  auto image = parse(mapping.bytes());
  if (!image) return unexpected(image.error().with_context("`" + path.string() + "`"));
  return image;
}

}  // namespace kernelhub::binary_format
