// GitBlobSha1: the git object id of a file's content, sha1("blob <size>\0" + content), which is
// what the Hub reports as the `oid`/ETag of a non-LFS file. Streamed: bytes go in as they
// arrive, nothing is re-read.
//
// Thread safety: one thread at a time per object. Errors: none (a size that does not match the
// bytes given simply yields a different id).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace kernelhub::client {

class GitBlobSha1 {
 public:
  // `size` is the total number of content bytes that update() will be given.
  explicit GitBlobSha1(std::uint64_t size);
  ~GitBlobSha1();
  GitBlobSha1(GitBlobSha1&&) noexcept;
  GitBlobSha1& operator=(GitBlobSha1&&) noexcept;

  void update(const void* data, std::size_t size);
  // 40 lower-case hex characters.
  std::string finish_hex();

 private:
  struct Context;
  std::unique_ptr<Context> context_;
};

// git_blob_sha1("hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a".
std::string git_blob_sha1(std::string_view content);

}  // namespace kernelhub::client
