#include "kernelhub/base/internal/git_blob_sha1.hpp"

#include "file_chunks.hpp"

namespace kernelhub {

GitBlobSha1::GitBlobSha1(std::uint64_t size) {
  const std::string header = "blob " + std::to_string(size);
  sha1_.update(header.data(), header.size() + 1);  // with the '\0'
}

std::string git_blob_sha1(std::string_view content) {
  GitBlobSha1 hasher(content.size());
  hasher.update(content.data(), content.size());
  return hasher.finish_hex();
}

Result<std::string> git_blob_sha1_file(const std::filesystem::path& path) {
  std::optional<GitBlobSha1> hasher;
  std::uint64_t expected = 0;
  KH_ASSIGN_OR_RETURN(const std::uint64_t read, detail::read_file_chunks(
                                                    path,
                                                    [&](std::uint64_t size) {
                                                      expected = size;
                                                      hasher.emplace(size);
                                                    },
                                                    [&](const char* data, std::size_t n) { hasher->update(data, n); }));
  if (read != expected) {
    return unexpected(ErrorCode::kIo, "`" + path.string() + "` changed size while it was read (" +
                                          std::to_string(expected) + " bytes, then " + std::to_string(read) + ")");
  }
  return hasher->finish_hex();
}

}  // namespace kernelhub
