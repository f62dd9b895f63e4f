#include "kernelhub/signing/internal/keys.hpp"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <unistd.h>

#include <cerrno>
#include <memory>

#include "kernelhub/base/internal/atomic_file.hpp"
#include "kernelhub/base/internal/base64.hpp"
#include "kernelhub/base/internal/read_file.hpp"
#include "kernelhub/base/internal/sha256.hpp"

namespace kernelhub::signing {

namespace {

constexpr std::size_t kMaxKeyFileSize = 64 * 1024;

struct PkeyFree {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct MdCtxFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
using UniquePkey = std::unique_ptr<EVP_PKEY, PkeyFree>;
using UniqueBio = std::unique_ptr<BIO, BioFree>;
using UniqueMdCtx = std::unique_ptr<EVP_MD_CTX, MdCtxFree>;

std::string_view trim(std::string_view s) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

UniqueBio memory_bio(std::string_view text) {
  return UniqueBio(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
}

std::string bio_text(BIO* bio) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  return std::string(data, n > 0 ? static_cast<std::size_t>(n) : 0);
}

bool is_pem(std::string_view text) {
  return text.starts_with("-----BEGIN ");
}

Result<std::string> read_small_file(const std::filesystem::path& path, std::string_view what) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return unexpected(os_error("cannot read " + std::string(what) + " `" + path.string() + "`", ec.value()));
  if (size > kMaxKeyFileSize) {
    return unexpected(ErrorCode::kInvalidArgument, std::string(what) + " `" + path.string() + "` is " +
                                                       std::to_string(size) + " bytes; a key file is a few hundred");
  }
  auto text = read_file(path);
  if (!text) return unexpected(text.error().with_context("reading " + std::string(what) + " `" + path.string() + "`"));
  return text;
}

template <typename T>
Result<T> with_file_context(Result<T> parsed, const std::filesystem::path& path) {
  if (!parsed) return unexpected(parsed.error().with_context("`" + path.string() + "`"));
  return parsed;
}

}  // namespace

// ---- PublicKey ----

Result<PublicKey> PublicKey::parse(std::string_view text) {
  text = trim(text);
  PublicKeyBytes raw{};
  if (is_pem(text)) {
    UniqueBio bio = memory_bio(text);
    UniquePkey pkey(PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr));
    if (!pkey) return unexpected(ErrorCode::kInvalidArgument, "not a readable PEM public key");
    if (EVP_PKEY_get_id(pkey.get()) != EVP_PKEY_ED25519) {
      return unexpected(ErrorCode::kInvalidArgument,
                        "the PEM public key is not an Ed25519 key (kernelhub signs with "
                        "Ed25519: `kernelhub keygen` makes a pair)");
    }
    std::size_t size = raw.size();
    if (EVP_PKEY_get_raw_public_key(pkey.get(), raw.data(), &size) != 1 || size != raw.size()) {
      return unexpected(ErrorCode::kInvalidArgument, "cannot read the raw bytes of the PEM public key");
    }
    return PublicKey(raw);
  }
  const auto bytes = base64_decode(text);
  if (!bytes || bytes->size() != raw.size()) {
    return unexpected(ErrorCode::kInvalidArgument,
                      "not an Ed25519 public key: expected PEM (-----BEGIN PUBLIC KEY-----) or the base64 of 32 raw "
                      "bytes (44 characters), found `" +
                          std::string(text.substr(0, 60)) + "`");
  }
  std::copy(bytes->begin(), bytes->end(), raw.begin());
  return PublicKey(raw);
}

Result<PublicKey> PublicKey::read(const std::filesystem::path& path) {
  KH_ASSIGN_OR_RETURN(std::string text, read_small_file(path, "public key file"));
  return with_file_context(parse(text), path);
}

std::string PublicKey::to_base64() const {
  return base64_encode(std::string_view(reinterpret_cast<const char*>(raw_.data()), raw_.size()));
}

std::string PublicKey::to_pem() const {
  UniquePkey pkey(EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr, raw_.data(), raw_.size()));
  UniqueBio bio(BIO_new(BIO_s_mem()));
  if (!pkey || !bio || PEM_write_bio_PUBKEY(bio.get(), pkey.get()) != 1) return {};
  return bio_text(bio.get());
}

std::string PublicKey::key_id() const {
  return to_hex(sha256(std::string_view(reinterpret_cast<const char*>(raw_.data()), raw_.size()))).substr(0, 16);
}

bool PublicKey::verify(std::string_view message, std::string_view signature) const {
  if (signature.size() != kSignatureSize) return false;
  UniquePkey pkey(EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr, raw_.data(), raw_.size()));
  UniqueMdCtx ctx(EVP_MD_CTX_new());
  if (!pkey || !ctx) return false;
  // Ed25519 is one-shot PureEdDSA: no digest is set (md = NULL), the message goes in whole.
  if (EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, pkey.get()) != 1) return false;
  return EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(signature.data()), signature.size(),
                          reinterpret_cast<const unsigned char*>(message.data()), message.size()) == 1;
}

// ---- PrivateKey ----

PrivateKey::~PrivateKey() {
  OPENSSL_cleanse(seed_.data(), seed_.size());
}

Result<PrivateKey> PrivateKey::generate() {
  UniquePkey pkey(EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519"));
  std::array<std::uint8_t, 32> seed{};
  std::size_t size = seed.size();
  if (!pkey || EVP_PKEY_get_raw_private_key(pkey.get(), seed.data(), &size) != 1 || size != seed.size()) {
    return unexpected(ErrorCode::kInternal, "OpenSSL could not generate an Ed25519 key");
  }
  PrivateKey key(seed);
  OPENSSL_cleanse(seed.data(), seed.size());
  return key;
}

Result<PrivateKey> PrivateKey::parse(std::string_view text) {
  text = trim(text);
  std::array<std::uint8_t, 32> seed{};
  if (is_pem(text)) {
    UniqueBio bio = memory_bio(text);
    UniquePkey pkey(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
    if (!pkey) {
      return unexpected(ErrorCode::kInvalidArgument,
                        "not a readable PEM private key (an unencrypted PKCS#8 key is expected)");
    }
    if (EVP_PKEY_get_id(pkey.get()) != EVP_PKEY_ED25519) {
      return unexpected(ErrorCode::kInvalidArgument,
                        "the PEM private key is not an Ed25519 key (kernelhub signs with "
                        "Ed25519: `kernelhub keygen` makes a pair)");
    }
    std::size_t size = seed.size();
    if (EVP_PKEY_get_raw_private_key(pkey.get(), seed.data(), &size) != 1 || size != seed.size()) {
      return unexpected(ErrorCode::kInvalidArgument, "cannot read the raw bytes of the PEM private key");
    }
  } else {
    auto bytes = base64_decode(text);
    if (!bytes || bytes->size() != seed.size()) {
      return unexpected(ErrorCode::kInvalidArgument,
                        "not an Ed25519 private key: expected PEM (-----BEGIN PRIVATE KEY-----) or the base64 of a "
                        "32-byte seed");
    }
    std::copy(bytes->begin(), bytes->end(), seed.begin());
    OPENSSL_cleanse(bytes->data(), bytes->size());
  }
  PrivateKey key(seed);
  OPENSSL_cleanse(seed.data(), seed.size());
  return key;
}

Result<PrivateKey> PrivateKey::read(const std::filesystem::path& path) {
  KH_ASSIGN_OR_RETURN(std::string text, read_small_file(path, "private key file"));
  auto key = with_file_context(parse(text), path);
  OPENSSL_cleanse(text.data(), text.size());
  return key;
}

std::string PrivateKey::to_pem() const {
  UniquePkey pkey(EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, seed_.data(), seed_.size()));
  UniqueBio bio(BIO_new(BIO_s_mem()));
  if (!pkey || !bio || PEM_write_bio_PrivateKey(bio.get(), pkey.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return {};
  }
  return bio_text(bio.get());
}

Status PrivateKey::write(const std::filesystem::path& path) const {
  std::string pem = to_pem();
  if (pem.empty()) return unexpected(ErrorCode::kInternal, "OpenSSL could not encode the private key as PEM");
  auto written = write_new_file(path, pem, 0600);
  OPENSSL_cleanse(pem.data(), pem.size());
  return written;
}

PublicKey PrivateKey::public_key() const {
  UniquePkey pkey(EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, seed_.data(), seed_.size()));
  PublicKeyBytes raw{};
  std::size_t size = raw.size();
  if (pkey) EVP_PKEY_get_raw_public_key(pkey.get(), raw.data(), &size);
  return PublicKey::from_raw(raw);
}

std::string PrivateKey::sign(std::string_view message) const {
  UniquePkey pkey(EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, seed_.data(), seed_.size()));
  UniqueMdCtx ctx(EVP_MD_CTX_new());
  std::string signature(kSignatureSize, '\0');
  std::size_t size = signature.size();
  if (!pkey || !ctx || EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, pkey.get()) != 1 ||
      EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(signature.data()), &size,
                     reinterpret_cast<const unsigned char*>(message.data()), message.size()) != 1 ||
      size != kSignatureSize) {
    return {};  // cannot happen with a valid 32-byte seed; an empty signature never verifies
  }
  return signature;
}

// ---- files ----

Status write_new_file(const std::filesystem::path& path, std::string_view text, unsigned mode) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode));
  if (!fd) {
    if (errno == EEXIST) {
      return unexpected(ErrorCode::kInvalidArgument,
                        "`" + path.string() + "` already exists; choose another path or remove it first");
    }
    return unexpected(os_error("cannot create `" + path.string() + "`", errno));
  }
  Status written = write_fully(fd.get(), text, path);
  if (written && ::close(fd.release()) != 0)
    written = unexpected(os_error("cannot write `" + path.string() + "`", errno));
  if (!written) {
    std::error_code ignored;
    std::filesystem::remove(path, ignored);  // leave no partial key behind
  }
  return written;
}

}  // namespace kernelhub::signing
