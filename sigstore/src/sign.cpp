#include "kernelhub/sigstore/sign.hpp"

#include <openssl/evp.h>
#include <openssl/pem.h>

#include <nlohmann/json.hpp>

#include "kernelhub/base/internal/base64.hpp"
#include "kernelhub/sigstore/internal/openssl_handles.hpp"
#include "kernelhub/sigstore/internal/verification_key.hpp"

namespace kernelhub::sigstore {

Result<std::string> sign_with_key(evp_pkey_st* private_key, std::string_view artifact) {
  const ClearOpensslErrorsOnExit clear_errors;
  auto key = VerificationKey::from_pkey(private_key);
  if (!key) return unexpected(ErrorCode::kInvalidArgument, "the signing key is " + key.error().message);
  const bool ed25519 = key->kind() == VerificationKey::Kind::kEd25519;
  const HashAlgorithm hash = key->default_hash();
  UniqueMdCtx ctx(EVP_MD_CTX_new());
  std::size_t size = 0;
  const auto* data = reinterpret_cast<const unsigned char*>(artifact.data());
  if (!ctx ||
      EVP_DigestSignInit_ex(ctx.get(), nullptr, ed25519 ? nullptr : EVP_MD_get0_name(evp_md(hash)), nullptr, nullptr,
                            private_key, nullptr) != 1 ||
      EVP_DigestSign(ctx.get(), nullptr, &size, data, artifact.size()) != 1) {
    return unexpected(ErrorCode::kInvalidArgument, "the key cannot sign (is it a private key?)");
  }
  std::string signature(size, '\0');
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(signature.data()), &size, data, artifact.size()) !=
      1) {
    return unexpected(ErrorCode::kInvalidArgument, "the key cannot sign (is it a private key?)");
  }
  signature.resize(size);
  const nlohmann::json bundle = {
      {"mediaType", "application/vnd.dev.sigstore.bundle.v0.3+json"},
      {"verificationMaterial",
       {{"publicKey", {{"hint", base64_encode(digest(HashAlgorithm::kSha256, key->spki_der()))}}}}},
      {"messageSignature",
       {{"messageDigest",
         {{"algorithm", std::string(protobuf_name(hash))}, {"digest", base64_encode(digest(hash, artifact))}}},
        {"signature", base64_encode(signature)}}},
  };
  return bundle.dump();
}

Result<std::string> sign_with_key(std::string_view private_key_pem, std::string_view artifact) {
  const ClearOpensslErrorsOnExit clear_errors;
  UniqueBio bio(BIO_new_mem_buf(private_key_pem.data(), static_cast<int>(private_key_pem.size())));
  // No passphrase: OpenSSL's default would prompt on the terminal for an encrypted key.
  pem_password_cb* no_passphrase = [](char*, int, int, void*) { return 0; };
  UniquePkey key(bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, no_passphrase, nullptr) : nullptr);
  if (!key) {
    return unexpected(ErrorCode::kInvalidArgument,
                      "not an unencrypted PEM private key (`-----BEGIN PRIVATE KEY-----`); a cosign key "
                      "(`ENCRYPTED SIGSTORE PRIVATE KEY`) must be exported to PKCS#8 first");
  }
  return sign_with_key(key.get(), artifact);
}

}  // namespace kernelhub::sigstore
