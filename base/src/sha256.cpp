#include "kernelhub/base/sha256.hpp"
#include "kernelhub/base/base64.hpp"
#include "kernelhub/base/unique_file.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <vector>

namespace kernelhub {

struct Sha256::Context {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx{EVP_MD_CTX_new(), &EVP_MD_CTX_free};
};

Sha256::Sha256() : context_(std::make_unique<Context>()) {
  EVP_DigestInit_ex(context_->ctx.get(), EVP_sha256(), nullptr);
}
Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

void Sha256::update(const void* data, std::size_t size) {
  EVP_DigestUpdate(context_->ctx.get(), data, size);
}

Sha256Digest Sha256::finish() {
  Sha256Digest digest{};
  unsigned int size = 0;
  EVP_DigestFinal_ex(context_->ctx.get(), digest.data(), &size);
  return digest;
}

Sha256Digest sha256(std::string_view bytes) {
  Sha256 hasher;
  hasher.update(bytes);
  return hasher.finish();
}

Result<FileHash> hash_file(const std::filesystem::path& path) {
  UniqueFile file = open_file(path, "rb");
  if (!file) return unexpected(os_error("cannot open `" + path.string() + "`", errno));
  Sha256 hasher;
  std::vector<char> buffer(1 << 20);
  std::uint64_t size = 0;
  while (true) {
    const std::size_t n = std::fread(buffer.data(), 1, buffer.size(), file.get());
    if (n > 0) hasher.update(buffer.data(), n);
    size += n;
    if (n < buffer.size()) {
      if (std::ferror(file.get())) return unexpected(os_error("cannot read `" + path.string() + "`", EIO));
      break;
    }
  }
  return FileHash{hasher.finish(), size};
}

Result<Sha256Digest> sha256_file(const std::filesystem::path& path) {
  KH_ASSIGN_OR_RETURN(FileHash hash, hash_file(path));
  return hash.digest;
}

bool is_lower_hex(std::string_view text, std::size_t length) {
  return text.size() == length &&
         std::all_of(text.begin(), text.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::string to_hex(const Sha256Digest& digest) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(digest.size() * 2);
  for (std::uint8_t byte : digest) {
    out.push_back(kHex[byte >> 4]);
    out.push_back(kHex[byte & 0xf]);
  }
  return out;
}

std::string to_base64(const Sha256Digest& digest) { return base64_encode(digest); }

}  // namespace kernelhub
