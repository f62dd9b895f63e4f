#include "kernelhub/base/internal/streamed_digest.hpp"

#include <openssl/evp.h>

namespace kernelhub {

struct StreamedDigest::Context {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx{EVP_MD_CTX_new(), &EVP_MD_CTX_free};
};

namespace {

const EVP_MD* message_digest(StreamedDigest::Algorithm algorithm) {
  switch (algorithm) {
    case StreamedDigest::Algorithm::kSha1: return EVP_sha1();
    case StreamedDigest::Algorithm::kSha256: return EVP_sha256();
    case StreamedDigest::Algorithm::kSha512: return EVP_sha512();
  }
  return EVP_sha256();
}

}  // namespace

StreamedDigest::StreamedDigest(Algorithm algorithm) : context_(std::make_unique<Context>()) {
  EVP_DigestInit_ex(context_->ctx.get(), message_digest(algorithm), nullptr);
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
