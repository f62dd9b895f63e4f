#include "kernelhub/client/git_blob_sha1.hpp"

#include <openssl/evp.h>

namespace kernelhub::client {

struct GitBlobSha1::Context {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx{EVP_MD_CTX_new(), &EVP_MD_CTX_free};
};

GitBlobSha1::GitBlobSha1(std::uint64_t size) : context_(std::make_unique<Context>()) {
  EVP_DigestInit_ex(context_->ctx.get(), EVP_sha1(), nullptr);
  const std::string header = "blob " + std::to_string(size);
  EVP_DigestUpdate(context_->ctx.get(), header.data(), header.size() + 1);  // with the '\0'
}
GitBlobSha1::~GitBlobSha1() = default;
GitBlobSha1::GitBlobSha1(GitBlobSha1&&) noexcept = default;
GitBlobSha1& GitBlobSha1::operator=(GitBlobSha1&&) noexcept = default;

void GitBlobSha1::update(const void* data, std::size_t size) { EVP_DigestUpdate(context_->ctx.get(), data, size); }

std::string GitBlobSha1::finish_hex() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_DigestFinal_ex(context_->ctx.get(), digest, &size);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(size * 2);
  for (unsigned int i = 0; i < size; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 0xf]);
  }
  return out;
}

std::string git_blob_sha1(std::string_view content) {
  GitBlobSha1 hasher(content.size());
  hasher.update(content.data(), content.size());
  return hasher.finish_hex();
}

}  // namespace kernelhub::client
