#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <vector>

#include "file_chunks.hpp"
#include "kernelhub/base/internal/unique_file.hpp"

namespace kernelhub::detail {

Result<std::uint64_t> read_file_chunks(const std::filesystem::path& path,
                                       const std::function<void(std::uint64_t size)>& before,
                                       const std::function<void(const char* data, std::size_t size)>& chunk) {
  UniqueFile file = open_file(path, "rb");
  if (!file) return unexpected(os_error("cannot open `" + path.string() + "`", errno));
  struct stat st {};
  if (::fstat(::fileno(file.get()), &st) != 0)
    return unexpected(os_error("cannot stat `" + path.string() + "`", errno));
  before(static_cast<std::uint64_t>(st.st_size));
  std::vector<char> buffer(1 << 20);
  std::uint64_t total = 0;
  while (true) {
    const std::size_t n = std::fread(buffer.data(), 1, buffer.size(), file.get());
    if (n > 0) chunk(buffer.data(), n);
    total += n;
    if (n < buffer.size()) {
      if (std::ferror(file.get())) return unexpected(os_error("cannot read `" + path.string() + "`", EIO));
      return total;
    }
  }
}

}  // namespace kernelhub::detail
