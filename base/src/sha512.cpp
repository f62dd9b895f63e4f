#include "kernelhub/base/internal/sha512.hpp"

#include "file_chunks.hpp"

namespace kernelhub {

Sha512Digest Sha512::finish() {
  Sha512Digest digest{};
  finish_into(digest.data());
  return digest;
}

Result<Sha512Digest> sha512_file(const std::filesystem::path& path) {
  Sha512 hasher;
  KH_RETURN_IF_ERROR(detail::read_file_chunks(
      path, [](std::uint64_t) {}, [&](const char* data, std::size_t n) { hasher.update(data, n); }));
  return hasher.finish();
}

}  // namespace kernelhub
