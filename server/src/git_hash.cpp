#include "git_hash.hpp"
#include "kernelhub/base/unique_file.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cerrno>
#include <cstdio>
#include <vector>

namespace kernelhub::server {
namespace {
std::string hex(const unsigned char* data, std::size_t size) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(size * 2);
  for (std::size_t i = 0; i < size; ++i) {
    out.push_back(kHex[data[i] >> 4]);
    out.push_back(kHex[data[i] & 15]);
  }
  return out;
}
}  // namespace

struct Sha1::Context {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx{EVP_MD_CTX_new(), &EVP_MD_CTX_free};
};

Sha1::Sha1() : context_(std::make_unique<Context>()) {
  EVP_DigestInit_ex(context_->ctx.get(), EVP_sha1(), nullptr);
}
Sha1::~Sha1() = default;
Sha1::Sha1(Sha1&&) noexcept = default;

void Sha1::update(const void* data, std::size_t size) {
  EVP_DigestUpdate(context_->ctx.get(), data, size);
}

std::string Sha1::finish_hex() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_DigestFinal_ex(context_->ctx.get(), digest, &size);
  return hex(digest, size);
}

std::string sha1_hex(std::string_view bytes) {
  Sha1 h;
  h.update(bytes);
  return h.finish_hex();
}

std::string git_blob_sha1(std::string_view content) {
  Sha1 h;
  const std::string header = "blob " + std::to_string(content.size());
  h.update(header.data(), header.size() + 1);  // includes the terminating NUL
  h.update(content);
  return h.finish_hex();
}

Result<std::string> git_blob_sha1_file(const std::filesystem::path& path, std::uint64_t size) {
  UniqueFile file = open_file(path, "rb");
  if (!file) return unexpected(os_error("cannot open `" + path.string() + "`", errno));
  Sha1 h;
  const std::string header = "blob " + std::to_string(size);
  h.update(header.data(), header.size() + 1);
  std::vector<char> buffer(1 << 20);
  while (true) {
    const std::size_t n = std::fread(buffer.data(), 1, buffer.size(), file.get());
    if (n > 0) h.update(buffer.data(), n);
    if (n < buffer.size()) {
      if (std::ferror(file.get())) return unexpected(os_error("cannot read `" + path.string() + "`", EIO));
      break;
    }
  }
  return h.finish_hex();
}

std::string hmac_hex(std::string_view key, std::string_view message) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(message.data()),
       message.size(), out, &size);
  return hex(out, 16);
}

bool is_hex(std::string_view s) {
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return !s.empty();
}

bool is_sha256_hex(std::string_view s) {
  return s.size() == 64 && is_hex(s);
}

}  // namespace kernelhub::server
