#include "kernelhub/sigstore/sign.hpp"

#include <openssl/evp.h>
#include <openssl/pem.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "kernelhub/base/internal/base64.hpp"
#include "kernelhub/base/internal/hex.hpp"
#include "kernelhub/base/internal/sha256.hpp"
#include "kernelhub/sigstore/internal/openssl_handles.hpp"
#include "kernelhub/sigstore/verify.hpp"

namespace kernelhub::sigstore {
namespace {

struct KeyPair {
  std::string private_pem;
  std::string public_pem;
};

KeyPair generate(const char* type, const char* curve) {
  UniquePkey key(curve ? EVP_PKEY_Q_keygen(nullptr, nullptr, type, curve) : EVP_PKEY_Q_keygen(nullptr, nullptr, type));
  REQUIRE(key);
  const auto pem = [](auto write) {
    UniqueBio bio(BIO_new(BIO_s_mem()));
    write(bio.get());
    char* data = nullptr;
    const long size = BIO_get_mem_data(bio.get(), &data);
    return std::string(data, static_cast<std::size_t>(size));
  };
  return {pem([&](BIO* b) { PEM_write_bio_PrivateKey(b, key.get(), nullptr, nullptr, 0, nullptr, nullptr); }),
          pem([&](BIO* b) { PEM_write_bio_PUBKEY(b, key.get()); })};
}

TEST_CASE("sign_with_key writes what cosign sign-blob --key --tlog-upload=false writes, and it verifies") {
  const std::string artifact = "{\"kernel\": \"relu\", \"version\": 1}\n";
  const KeyPair pair = generate("EC", "P-256");
  auto text = sign_with_key(pair.private_pem, artifact);
  REQUIRE(text);
  const auto json = nlohmann::json::parse(*text);
  CHECK(json["mediaType"] == "application/vnd.dev.sigstore.bundle.v0.3+json");
  CHECK(json["messageSignature"]["messageDigest"]["algorithm"] == "SHA2_256");
  const auto digest = kernelhub::sha256(artifact);
  CHECK(json["messageSignature"]["messageDigest"]["digest"] ==
        base64_encode(std::string(digest.begin(), digest.end())));
  CHECK(json["verificationMaterial"].size() == 1);  // the hint only: no log entry, no timestamp
  auto key = Signer::from_public_key_pem(pair.public_pem);
  REQUIRE(key);
  const auto& fingerprint = std::get<KeyIdentity>(key->identity).fingerprint;
  const auto hint = *base64_decode(json["verificationMaterial"]["publicKey"]["hint"].get<std::string>());
  CHECK(to_hex(hint) == fingerprint);

  auto bundle = Bundle::parse(*text);
  REQUIRE(bundle);
  VerifyOptions options{pair.public_pem, true};
  CHECK(verify(*bundle, Artifact::bytes(artifact), TrustedRoot::public_good(), options));
}

TEST_CASE("P-384 and Ed25519 keys sign too, and their signatures need the artifact's bytes") {
  const std::string artifact = "metadata";
  for (const auto& [type, curve] :
       std::vector<std::pair<const char*, const char*>>{{"EC", "P-384"}, {"ED25519", nullptr}}) {
    INFO(type << " " << (curve ? curve : ""));
    const KeyPair pair = generate(type, curve);
    auto text = sign_with_key(pair.private_pem, artifact);
    REQUIRE(text);
    auto bundle = Bundle::parse(*text);
    REQUIRE(bundle);
    VerifyOptions options{pair.public_pem, true};
    CHECK(verify(*bundle, Artifact::bytes(artifact), TrustedRoot::public_good(), options));
    auto digest_only =
        verify(*bundle, Artifact::sha256(kernelhub::sha256(artifact)), TrustedRoot::public_good(), options);
    REQUIRE_FALSE(digest_only);
    CHECK_THAT(digest_only.error().message, Catch::Contains("bytes"));
  }
}

TEST_CASE("sign_with_key refuses what is not an unencrypted private key, without prompting for a passphrase") {
  const KeyPair pair = generate("EC", "P-256");
  for (const std::string& text : {std::string("garbage"), pair.public_pem}) {
    auto refused = sign_with_key(text, "x");
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code == ErrorCode::kInvalidArgument);
  }
  UniqueBio in(BIO_new_mem_buf(pair.private_pem.data(), static_cast<int>(pair.private_pem.size())));
  UniquePkey key(PEM_read_bio_PrivateKey(in.get(), nullptr, nullptr, nullptr));
  UniqueBio out(BIO_new(BIO_s_mem()));
  char passphrase[] = "secret";
  PEM_write_bio_PKCS8PrivateKey(out.get(), key.get(), EVP_aes_256_cbc(), passphrase, 6, nullptr, nullptr);
  char* data = nullptr;
  const long size = BIO_get_mem_data(out.get(), &data);
  auto encrypted = sign_with_key(std::string(data, static_cast<std::size_t>(size)), "x");
  REQUIRE_FALSE(encrypted);
  CHECK_THAT(encrypted.error().message, Catch::Contains("unencrypted"));
}

}  // namespace
}  // namespace kernelhub::sigstore
