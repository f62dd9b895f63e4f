#include "kernelhub/base/internal/read_file.hpp"

#include <cerrno>
#include <cstdio>

#include "kernelhub/base/internal/unique_file.hpp"

namespace kernelhub {

Result<std::string> read_file(const std::filesystem::path& path) {
  UniqueFile in = open_file(path, "rb");
  if (!in) return unexpected(os_error("cannot open `" + path.string() + "`", errno));
  std::string out;
  char buffer[65536];
  while (const std::size_t n = std::fread(buffer, 1, sizeof buffer, in.get())) out.append(buffer, n);
  if (std::ferror(in.get())) return unexpected(os_error("cannot read `" + path.string() + "`", EIO));
  return out;
}

}  // namespace kernelhub
