#include "kernelhub/base/sha512.hpp"

#include <openssl/evp.h>

#include <cerrno>
#include <cstdio>
#include <memory>
#include <vector>

#include "kernelhub/base/base64.hpp"
#include "kernelhub/base/unique_file.hpp"

namespace kernelhub {

Result<Sha512Digest> sha512_file(const std::filesystem::path& path) {
  UniqueFile file = open_file(path, "rb");
  if (!file) return unexpected(os_error("cannot open `" + path.string() + "`", errno));
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx{EVP_MD_CTX_new(), &EVP_MD_CTX_free};
  EVP_DigestInit_ex(ctx.get(), EVP_sha512(), nullptr);
  std::vector<char> buffer(1 << 20);
  while (true) {
    const std::size_t n = std::fread(buffer.data(), 1, buffer.size(), file.get());
    if (n > 0) EVP_DigestUpdate(ctx.get(), buffer.data(), n);
    if (n < buffer.size()) {
      if (std::ferror(file.get())) return unexpected(os_error("cannot read `" + path.string() + "`", EIO));
      break;
    }
  }
  Sha512Digest digest{};
  unsigned int size = 0;
  EVP_DigestFinal_ex(ctx.get(), digest.data(), &size);
  return digest;
}

std::string to_base64(const Sha512Digest& digest) {
  return base64_encode(digest);
}

}  // namespace kernelhub
