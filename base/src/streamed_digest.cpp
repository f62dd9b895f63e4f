#include "kernelhub/base/streamed_digest.hpp"

#include <openssl/evp.h>

namespace kernelhub {

struct StreamedDigest::Context {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx{EVP_MD_CTX_new(), &EVP_MD_CTX_free};
};

StreamedDigest::StreamedDigest(Algorithm algorithm) : context_(std::make_unique<Context>()) {
  EVP_DigestInit_ex(context_->ctx.get(), algorithm == Algorithm::kSha1 ? EVP_sha1() : EVP_sha256(), nullptr);
}
StreamedDigest::~StreamedDigest() = default;
StreamedDigest::StreamedDigest(StreamedDigest&&) noexcept = default;
StreamedDigest& StreamedDigest::operator=(StreamedDigest&&) noexcept = default;

void StreamedDigest::update(const void* data, std::size_t size) {
  EVP_DigestUpdate(context_->ctx.get(), data, size);
}

std::size_t StreamedDigest::finish_into(std::uint8_t* out) {
  unsigned int size = 0;
  EVP_DigestFinal_ex(context_->ctx.get(), out, &size);
  return size;
}

}  // namespace kernelhub
