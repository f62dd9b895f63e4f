#include "kernelhub/signing/internal/keys.hpp"

#include <sys/stat.h>

#include <catch2/catch.hpp>

#include "signing_fixture.hpp"

namespace kernelhub::signing {
namespace {

using testing::TempDir;

std::string from_hex(std::string_view hex) {
  std::string out;
  for (std::size_t i = 0; i < hex.size(); i += 2)
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  return out;
}

TEST_CASE("Ed25519 matches RFC 8032 test 1 (empty message)") {
  const PrivateKey key = testing::publisher_key();
  CHECK(key.public_key().to_base64() == "11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=");
  const std::string expected = from_hex(
      "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24"
      "65"
      "5141438e7a100b");
  CHECK(key.sign("") == expected);
  CHECK(key.public_key().verify("", expected));
}

TEST_CASE("a signature verifies for its message and key only") {
  const PrivateKey key = testing::publisher_key();
  const std::string signature = key.sign("manifest bytes");
  REQUIRE(signature.size() == kSignatureSize);
  CHECK(key.public_key().verify("manifest bytes", signature));
  CHECK_FALSE(key.public_key().verify("manifest bytes ", signature));
  CHECK_FALSE(testing::other_key().public_key().verify("manifest bytes", signature));
  std::string flipped = signature;
  flipped[10] ^= 1;
  CHECK_FALSE(key.public_key().verify("manifest bytes", flipped));
  CHECK_FALSE(key.public_key().verify("manifest bytes", signature.substr(0, 63)));
  CHECK_FALSE(key.public_key().verify("manifest bytes", ""));
}

TEST_CASE("generated keys differ and round-trip through PEM and base64") {
  auto a = PrivateKey::generate();
  auto b = PrivateKey::generate();
  REQUIRE(a.has_value());
  REQUIRE(b.has_value());
  CHECK_FALSE(a->public_key() == b->public_key());
  const std::string pem = a->to_pem();
  CHECK(pem.starts_with("-----BEGIN PRIVATE KEY-----"));
  auto reread = PrivateKey::parse(pem);
  REQUIRE(reread.has_value());
  CHECK(reread->public_key() == a->public_key());
  const PublicKey pub = a->public_key();
  CHECK(PublicKey::parse(pub.to_pem())->raw() == pub.raw());
  CHECK(PublicKey::parse("  " + pub.to_base64() + "\n")->raw() == pub.raw());
  CHECK(pub.key_id().size() == 16);
  CHECK(pub.key_id() != b->public_key().key_id());
}

TEST_CASE("malformed keys are refused with what was expected") {
  for (const std::string bad : {"", "not base64!", "AAAA", "11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo",
                                "11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURp=", "-----BEGIN PUBLIC KEY-----\nxx\n"}) {
    auto key = PublicKey::parse(bad);
    REQUIRE_FALSE(key.has_value());
    CHECK(key.error().code == ErrorCode::kInvalidArgument);
  }
  auto private_key = PrivateKey::parse("-----BEGIN PRIVATE KEY-----\ngarbage\n-----END PRIVATE KEY-----\n");
  REQUIRE_FALSE(private_key.has_value());
  CHECK_THAT(private_key.error().message, Catch::Contains("PEM private key"));
}

TEST_CASE("a private key file is written 0600, never over an existing file, and read back") {
  TempDir temp;
  const auto path = temp.path() / "signing.key";
  const PrivateKey key = testing::publisher_key();
  REQUIRE(key.write(path).has_value());
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  auto again = key.write(path);
  REQUIRE_FALSE(again.has_value());
  CHECK_THAT(again.error().message, Catch::Contains("already exists"));
  auto read = PrivateKey::read(path);
  REQUIRE(read.has_value());
  CHECK(read->public_key() == key.public_key());
  auto missing = PublicKey::read(temp.path() / "nope.pub");
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().code == ErrorCode::kNotFound);
}

}  // namespace
}  // namespace kernelhub::signing
