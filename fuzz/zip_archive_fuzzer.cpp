// libFuzzer target: ZipArchive::read (base/zip_archive.hpp), the structure of a zip layout's
// package archive, and the member checks of fetch/zip_layout.hpp on what it accepts. The bytes go
// through a memfd, so the reader's pread path is the one exercised. Oracles: every accepted
// member's local header and data lie inside the file; a name zip_member_name_problem() accepts is
// relative, inside the package (no `..` segment) and free of `\`, `:` and control bytes.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "fuzz_require.hpp"
#include "kernelhub/base/internal/unique_fd.hpp"
#include "kernelhub/base/internal/zip_archive.hpp"
#include "kernelhub/fetch/internal/zip_layout.hpp"

using kernelhub::fuzz::require;

namespace {

bool is_contained(const std::string& name) {
  std::string path = name;
  if (!path.empty() && path.back() == '/') path.pop_back();
  if (path.empty() || path.front() == '/') return false;
  for (const char c : path) {
    if (c == '\\' || c == ':' || static_cast<unsigned char>(c) < 0x20 || c == 0x7F) return false;
  }
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t slash = std::min(path.find('/', start), path.size());
    const std::string segment = path.substr(start, slash - start);
    if (segment.empty() || segment == "." || segment == "..") return false;
    start = slash + 1;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const kernelhub::UniqueFd fd(::memfd_create("zip", MFD_CLOEXEC));
  if (!fd) return 0;
  if (size > 0 && ::write(fd.get(), data, size) != static_cast<ssize_t>(size)) return 0;
  auto archive = kernelhub::ZipArchive::read("/proc/self/fd/" + std::to_string(fd.get()));
  if (!archive) return 0;
  require(archive->file_size() == size);
  for (const auto& member : archive->members()) {
    require(member.local_header_offset + 30 + member.name.size() + member.compressed_size <= size);
    if (!kernelhub::zip_member_name_problem(member.name)) require(is_contained(member.name));
  }
  return 0;
}
