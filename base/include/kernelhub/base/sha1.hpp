// SHA-1 (OpenSSL EVP), streamed, as 40 lower-case hex characters: git object ids and the
// server's stable ids. Not for security: nothing is trusted on a SHA-1 alone.
//
// Thread safety: free functions; a Sha1 object is used by one thread at a time.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace kernelhub {

class Sha1 {
 public:
  Sha1();
  ~Sha1();
  Sha1(Sha1&&) noexcept;
  Sha1& operator=(Sha1&&) noexcept;

  void update(const void* data, std::size_t size);
  void update(std::string_view bytes) { update(bytes.data(), bytes.size()); }
  // 40 lower-case hex characters.
  std::string finish_hex();

 private:
  struct Context;
  std::unique_ptr<Context> context_;
};

std::string sha1_hex(std::string_view bytes);

}  // namespace kernelhub
