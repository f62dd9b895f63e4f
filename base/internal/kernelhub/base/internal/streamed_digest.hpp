// StreamedDigest: a message digest (OpenSSL EVP) fed in pieces, so that nothing hashed is ever
// held in memory whole. Sha256 (sha256.hpp), Sha1 (sha1.hpp) and Sha512 (sha512.hpp) are its
// kinds; they add how their result is read.
//
// Thread safety: an object is used by one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

namespace kernelhub {

class StreamedDigest {
 public:
  enum class Algorithm { kSha1, kSha256, kSha512 };

  ~StreamedDigest();
  StreamedDigest(StreamedDigest&&) noexcept;
  StreamedDigest& operator=(StreamedDigest&&) noexcept;

  void update(const void* data, std::size_t size);
  void update(std::string_view bytes) { update(bytes.data(), bytes.size()); }

 protected:
  explicit StreamedDigest(Algorithm algorithm);
  // Writes the digest (64 bytes at most) to `out` and returns its size. Once per object.
  std::size_t finish_into(std::uint8_t* out);

 private:
  struct Context;
  std::unique_ptr<Context> context_;
};

}  // namespace kernelhub
