// A public key that verifies Sigstore signatures: a signer's (certificate or managed key), a
// transparency log's, a CT log's. The key kinds Sigstore uses: ECDSA P-256/P-384/P-521 (DER
// signatures, over a SHA-2 digest), Ed25519 (over the message itself) and RSA PKCS#1 v1.5 (the
// staging CT log's key, managed RSA keys).
//
// Thread safety: immutable after construction; copies share the OpenSSL key, which OpenSSL allows
// to be used from several threads for verification.
#pragma once

#include <openssl/evp.h>

#include <memory>
#include <string>
#include <string_view>

#include "kernelhub/base/result.hpp"

namespace kernelhub::sigstore {

enum class HashAlgorithm { kSha256, kSha384, kSha512 };

// "SHA2_256", "SHA2_384", "SHA2_512": protobuf-specs' HashAlgorithm names.
std::string_view protobuf_name(HashAlgorithm hash);
// "sha256", "sha384", "sha512": Rekor v1's names.
std::string_view rekor_name(HashAlgorithm hash);
// OpenSSL's digest of `hash`.
const EVP_MD* evp_md(HashAlgorithm hash);
// The digest of `data`.
std::string digest(HashAlgorithm hash, std::string_view data);
std::size_t digest_size(HashAlgorithm hash);

class VerificationKey {
 public:
  enum class Kind { kEcdsaP256, kEcdsaP384, kEcdsaP521, kEd25519, kRsa };

  // A DER SubjectPublicKeyInfo. Errors: kCorruptFile (not a key, or a kind above it is not).
  static Result<VerificationKey> from_spki_der(std::string_view der);
  // A DER RSAPublicKey (PKCS#1), protobuf-specs' PKCS1_RSA_PKCS1V5. Errors: kCorruptFile.
  static Result<VerificationKey> from_pkcs1_rsa_der(std::string_view der);
  // PEM "PUBLIC KEY" (what `cosign generate-key-pair` and `openssl pkey -pubout` write).
  // Errors: kInvalidArgument.
  static Result<VerificationKey> from_pem(std::string_view pem);
  // Takes one reference to `key` (the caller keeps its own). Errors: kCorruptFile.
  static Result<VerificationKey> from_pkey(EVP_PKEY* key);

  Kind kind() const { return kind_; }
  // The hash ECDSA and RSA signatures of this key use by default (P-384: SHA-384, P-521: SHA-512,
  // else SHA-256); Ed25519 hashes nothing itself, and SHA-512 names it in Rekor v2's entries.
  HashAlgorithm default_hash() const;
  // protobuf-specs' PublicKeyDetails for this key: "PKIX_ECDSA_P256_SHA_256", "PKIX_ED25519", ...
  std::string key_details() const;
  // "ECDSA P-256", "Ed25519", "RSA 2048".
  std::string description() const;
  const std::string& spki_der() const { return spki_der_; }
  // sha256(SubjectPublicKeyInfo DER), lower-case hex: a managed key's fingerprint.
  std::string fingerprint() const;

  // Whether `signature` is this key's signature of `message`: ECDSA and RSA over hash(message),
  // Ed25519 over the message itself (`hash` ignored).
  bool verify_message(std::string_view message, std::string_view signature, HashAlgorithm hash) const;
  // Whether `signature` is this key's signature of a message whose `hash` is `digest` (ECDSA, RSA;
  // always false for Ed25519, which cannot verify a digest).
  bool verify_digest(std::string_view digest, std::string_view signature, HashAlgorithm hash) const;

  EVP_PKEY* get() const { return key_.get(); }

 private:
  VerificationKey() = default;
  std::shared_ptr<EVP_PKEY> key_;
  Kind kind_ = Kind::kEcdsaP256;
  std::string spki_der_;
};

}  // namespace kernelhub::sigstore
