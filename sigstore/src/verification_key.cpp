#include "kernelhub/sigstore/internal/verification_key.hpp"

#include <openssl/core_names.h>
#include <openssl/decoder.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "kernelhub/base/internal/hex.hpp"
#include "kernelhub/sigstore/internal/openssl_handles.hpp"

namespace kernelhub::sigstore {

namespace {

const unsigned char* bytes(std::string_view s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

}  // namespace

const EVP_MD* evp_md(HashAlgorithm hash) {
  switch (hash) {
    case HashAlgorithm::kSha256: return EVP_sha256();
    case HashAlgorithm::kSha384: return EVP_sha384();
    case HashAlgorithm::kSha512: return EVP_sha512();
  }
  return EVP_sha256();
}

std::string_view protobuf_name(HashAlgorithm hash) {
  switch (hash) {
    case HashAlgorithm::kSha256: return "SHA2_256";
    case HashAlgorithm::kSha384: return "SHA2_384";
    case HashAlgorithm::kSha512: return "SHA2_512";
  }
  return "SHA2_256";
}

std::string_view rekor_name(HashAlgorithm hash) {
  switch (hash) {
    case HashAlgorithm::kSha256: return "sha256";
    case HashAlgorithm::kSha384: return "sha384";
    case HashAlgorithm::kSha512: return "sha512";
  }
  return "sha256";
}

std::size_t digest_size(HashAlgorithm hash) {
  return static_cast<std::size_t>(EVP_MD_get_size(evp_md(hash)));
}

std::string digest(HashAlgorithm hash, std::string_view data) {
  std::string out(EVP_MAX_MD_SIZE, '\0');
  unsigned int size = 0;
  EVP_Digest(data.data(), data.size(), reinterpret_cast<unsigned char*>(out.data()), &size, evp_md(hash), nullptr);
  out.resize(size);
  return out;
}

Result<VerificationKey> VerificationKey::from_pkey(EVP_PKEY* key) {
  VerificationKey out;
  switch (EVP_PKEY_get_base_id(key)) {
    case EVP_PKEY_EC: {
      char group[64] = {};
      std::size_t length = 0;
      if (EVP_PKEY_get_utf8_string_param(key, OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof group, &length) != 1) {
        return unexpected(ErrorCode::kCorruptFile, "an EC key without a named curve");
      }
      const std::string_view name(group, length);
      if (name == "prime256v1" || name == "P-256") {
        out.kind_ = Kind::kEcdsaP256;
      } else if (name == "secp384r1" || name == "P-384") {
        out.kind_ = Kind::kEcdsaP384;
      } else if (name == "secp521r1" || name == "P-521") {
        out.kind_ = Kind::kEcdsaP521;
      } else {
        return unexpected(ErrorCode::kCorruptFile,
                          "an EC key on curve `" + std::string(name) + "` (Sigstore uses P-256, P-384, P-521)");
      }
      break;
    }
    case EVP_PKEY_ED25519: out.kind_ = Kind::kEd25519; break;
    case EVP_PKEY_RSA:
      if (EVP_PKEY_get_bits(key) < 2048) {
        return unexpected(ErrorCode::kCorruptFile,
                          "an RSA key of " + std::to_string(EVP_PKEY_get_bits(key)) + " bits (at least 2048 needed)");
      }
      out.kind_ = Kind::kRsa;
      break;
    default:
      return unexpected(ErrorCode::kCorruptFile, "a key of a kind Sigstore does not use (not ECDSA, Ed25519, RSA)");
  }
  out.spki_der_ = encoded([&](unsigned char** der) { return i2d_PUBKEY(key, der); });
  if (out.spki_der_.empty()) return unexpected(ErrorCode::kCorruptFile, "a key OpenSSL cannot encode");
  EVP_PKEY_up_ref(key);
  out.key_ = std::shared_ptr<EVP_PKEY>(key, EVP_PKEY_free);
  return out;
}

Result<VerificationKey> VerificationKey::from_spki_der(std::string_view der) {
  const unsigned char* p = bytes(der);
  UniquePkey key(d2i_PUBKEY(nullptr, &p, static_cast<long>(der.size())));
  if (!key || p != bytes(der) + der.size()) {
    return unexpected(ErrorCode::kCorruptFile, "not a DER SubjectPublicKeyInfo");
  }
  return from_pkey(key.get());
}

Result<VerificationKey> VerificationKey::from_pkcs1_rsa_der(std::string_view der) {
  const unsigned char* p = bytes(der);
  UniquePkey key(d2i_PublicKey(EVP_PKEY_RSA, nullptr, &p, static_cast<long>(der.size())));
  if (!key || p != bytes(der) + der.size()) return unexpected(ErrorCode::kCorruptFile, "not a DER RSAPublicKey");
  return from_pkey(key.get());
}

Result<VerificationKey> VerificationKey::from_pem(std::string_view pem) {
  UniqueBio bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  UniquePkey key(bio ? PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr) : nullptr);
  if (!key) {
    return unexpected(ErrorCode::kInvalidArgument,
                      "not a PEM public key (`-----BEGIN PUBLIC KEY-----`, as `cosign generate-key-pair` writes)");
  }
  auto out = from_pkey(key.get());
  if (!out) return unexpected(ErrorCode::kInvalidArgument, "the public key is " + out.error().message);
  return out;
}

HashAlgorithm VerificationKey::default_hash() const {
  switch (kind_) {
    case Kind::kEcdsaP384: return HashAlgorithm::kSha384;
    case Kind::kEcdsaP521:
    case Kind::kEd25519: return HashAlgorithm::kSha512;
    default: return HashAlgorithm::kSha256;
  }
}

std::string VerificationKey::key_details() const {
  switch (kind_) {
    case Kind::kEcdsaP256: return "PKIX_ECDSA_P256_SHA_256";
    case Kind::kEcdsaP384: return "PKIX_ECDSA_P384_SHA_384";
    case Kind::kEcdsaP521: return "PKIX_ECDSA_P521_SHA_512";
    case Kind::kEd25519: return "PKIX_ED25519";
    case Kind::kRsa: return "PKIX_RSA_PKCS1V15_" + std::to_string(EVP_PKEY_get_bits(key_.get())) + "_SHA256";
  }
  return {};
}

std::string VerificationKey::description() const {
  switch (kind_) {
    case Kind::kEcdsaP256: return "ECDSA P-256";
    case Kind::kEcdsaP384: return "ECDSA P-384";
    case Kind::kEcdsaP521: return "ECDSA P-521";
    case Kind::kEd25519: return "Ed25519";
    case Kind::kRsa: return "RSA " + std::to_string(EVP_PKEY_get_bits(key_.get()));
  }
  return {};
}

std::string VerificationKey::fingerprint() const {
  return to_hex(digest(HashAlgorithm::kSha256, spki_der_));
}

bool VerificationKey::verify_digest(std::string_view digest, std::string_view signature, HashAlgorithm hash) const {
  if (kind_ == Kind::kEd25519 || digest.size() != digest_size(hash)) return false;
  UniquePkeyCtx ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, key_.get(), nullptr));
  if (!ctx || EVP_PKEY_verify_init(ctx.get()) != 1 || EVP_PKEY_CTX_set_signature_md(ctx.get(), evp_md(hash)) != 1) {
    return false;
  }
  if (kind_ == Kind::kRsa && EVP_PKEY_CTX_set_rsa_padding(ctx.get(), RSA_PKCS1_PADDING) != 1) return false;
  return EVP_PKEY_verify(ctx.get(), bytes(signature), signature.size(), bytes(digest), digest.size()) == 1;
}

bool VerificationKey::verify_message(std::string_view message, std::string_view signature, HashAlgorithm hash) const {
  if (kind_ != Kind::kEd25519) return verify_digest(sigstore::digest(hash, message), signature, hash);
  UniqueMdCtx ctx(EVP_MD_CTX_new());
  if (!ctx || EVP_DigestVerifyInit_ex(ctx.get(), nullptr, nullptr, nullptr, nullptr, key_.get(), nullptr) != 1) {
    return false;
  }
  return EVP_DigestVerify(ctx.get(), bytes(signature), signature.size(), bytes(message), message.size()) == 1;
}

}  // namespace kernelhub::sigstore
