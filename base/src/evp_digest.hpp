// Private to base: one OpenSSL EVP message digest in progress (RAII for EVP_MD_CTX), and the
// chunked file reader that every file digest streams through.
#pragma once

#include <openssl/evp.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>

#include "kernelhub/base/result.hpp"

namespace kernelhub::detail {

class EvpDigest {
 public:
  explicit EvpDigest(const EVP_MD* algorithm) { EVP_DigestInit_ex(ctx_.get(), algorithm, nullptr); }
  void update(const void* data, std::size_t size) { EVP_DigestUpdate(ctx_.get(), data, size); }
  // Writes the digest (EVP_MAX_MD_SIZE bytes at most) to `out`; returns its size.
  std::size_t finish(std::uint8_t* out) {
    unsigned int size = 0;
    EVP_DigestFinal_ex(ctx_.get(), out, &size);
    return size;
  }

 private:
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx_{EVP_MD_CTX_new(), &EVP_MD_CTX_free};
};

// Reads `path` once, in 1 MiB chunks, handing each to `chunk`. `before` is called first with the
// file's size (from the open file, so it is the size of what is read). Returns the bytes read.
// Errors: kNotFound, kIo.
Result<std::uint64_t> read_file_chunks(const std::filesystem::path& path,
                                       const std::function<void(std::uint64_t size)>& before,
                                       const std::function<void(const char* data, std::size_t size)>& chunk);

}  // namespace kernelhub::detail
