// GitBlobSha1: the git object id of a file's content, sha1("blob <size>\0" + content), which is
// what the Hub reports as the `oid`/ETag of a non-LFS file. Streamed: bytes go in as they
// arrive, nothing is re-read.
//
// Thread safety: one thread at a time per object. Errors: none (a size that does not match the
// bytes given simply yields a different id).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "kernelhub/base/internal/sha1.hpp"
#include "kernelhub/base/result.hpp"

namespace kernelhub {

class GitBlobSha1 {
 public:
  // `size` is the total number of content bytes that update() will be given.
  explicit GitBlobSha1(std::uint64_t size);

  void update(const void* data, std::size_t size) { sha1_.update(data, size); }
  // 40 lower-case hex characters.
  std::string finish_hex() { return sha1_.finish_hex(); }

 private:
  Sha1 sha1_;
};

// git_blob_sha1("hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a".
std::string git_blob_sha1(std::string_view content);

// The git blob sha1 of a file, read once. Errors: kNotFound, kIo (also when the file changed size
// while it was read).
Result<std::string> git_blob_sha1_file(const std::filesystem::path& path);

}  // namespace kernelhub
