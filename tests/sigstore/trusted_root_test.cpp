#include "kernelhub/sigstore/trusted_root.hpp"

#include <catch2/catch.hpp>
#include <fstream>

#include "support/temp_dir.hpp"
#include "test_instance.hpp"

namespace kernelhub::sigstore {
namespace {

using nlohmann::json;

Error refusal(const json& root) {
  auto parsed = TrustedRoot::parse(root.dump());
  REQUIRE_FALSE(parsed);
  return parsed.error();
}

TEST_CASE("the embedded public-good root is sigstore-python 4.5.1's, and describe() names what it trusts") {
  const TrustedRoot& root = TrustedRoot::public_good();
  CHECK(root.source().find("public-good") != std::string::npos);
  REQUIRE(root.certificate_authorities().size() == 2);
  REQUIRE(root.transparency_logs().size() == 2);
  REQUIRE(root.ct_logs().size() == 2);
  REQUIRE(root.timestamp_authorities().size() == 1);
  CHECK(root.transparency_logs()[0].base_url == "https://rekor.sigstore.dev");
  CHECK(root.transparency_logs()[1].key_details == "PKIX_ED25519");
  CHECK(root.certificate_authorities()[0].valid_for.end.has_value());
  CHECK_FALSE(root.certificate_authorities()[1].valid_for.end.has_value());
  for (const auto& log : root.transparency_logs()) CHECK(log.key_usable);
  const std::string text = root.describe();
  CHECK(text.find("https://fulcio.sigstore.dev") != std::string::npos);
  CHECK(text.find("from 2021-03-07T03:20:29Z to 2022-12-31T23:59:59.999Z") != std::string::npos);
  CHECK(text.find("https://log2025-1.rekor.sigstore.dev") != std::string::npos);
  CHECK(text.find("https://timestamp.sigstore.dev/api/v1/timestamp") != std::string::npos);
  // Parsed once: the same object every time.
  CHECK(&TrustedRoot::public_good() == &root);
}

TEST_CASE("the embedded staging root lists staging's Rekor v2 logs and its RSA CT log") {
  const TrustedRoot& root = TrustedRoot::staging();
  CHECK(root.transparency_logs().size() == 4);
  CHECK(root.ct_logs().size() == 4);
  CHECK(root.ct_logs()[0].key_details == "PKCS1_RSA_PKCS1V5");
  CHECK(root.ct_logs()[0].key_usable);
}

TEST_CASE("KERNELHUB_SIGSTORE_TRUSTED_ROOT names a file that replaces the embedded root") {
  ::kernelhub::testing::TempDir dir;
  const testing::TestInstance instance;
  const auto path = dir.path() / "trusted_root.json";
  std::ofstream(path) << instance.trusted_root().dump();
  auto from_file = TrustedRoot::from_environment(
      map_environment({{std::string(env_vars::kKernelhubSigstoreTrustedRoot), path.string()}}));
  REQUIRE(from_file);
  CHECK(from_file->source() == "trusted root `" + path.string() + "`");
  CHECK(from_file->transparency_logs()[0].base_url == "https://rekor.test.example");
  auto embedded = TrustedRoot::from_environment(map_environment({}));
  REQUIRE(embedded);
  CHECK(embedded->source() == TrustedRoot::public_good().source());
  auto missing = TrustedRoot::from_environment(
      map_environment({{std::string(env_vars::kKernelhubSigstoreTrustedRoot), (dir.path() / "nope.json").string()}}));
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == ErrorCode::kNotFound);
  CHECK(missing.error().message.find("KERNELHUB_SIGSTORE_TRUSTED_ROOT names") != std::string::npos);
}

TEST_CASE("a log key without the start of its validity is refused, not read as trusted forever") {
  const testing::TestInstance instance;
  json root = instance.trusted_root();
  root["tlogs"][1]["publicKey"]["validFor"].erase("start");
  const Error error = refusal(root);
  CHECK(error.code == ErrorCode::kCorruptFile);
  CHECK(error.message.find("`trusted root.tlogs[1].publicKey.validFor.start` is missing") != std::string::npos);
  root["tlogs"][1]["publicKey"].erase("validFor");
  CHECK(refusal(root).message.find("`trusted root.tlogs[1].publicKey.validFor` is missing") != std::string::npos);
}

TEST_CASE("malformed trusted roots are refused with the field named") {
  const testing::TestInstance instance;
  const json good = instance.trusted_root();
  REQUIRE(TrustedRoot::parse(good.dump()));
  struct Case {
    const char* what;
    std::function<void(json&)> change;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"media type", [](json& r) { r["mediaType"] = "application/vnd.dev.sigstore.trustedroot+json;version=0.2"; },
       "media type is `application/vnd.dev.sigstore.trustedroot+json;version=0.2`"},
      {"base64", [](json& r) { r["tlogs"][0]["publicKey"]["rawBytes"] = "not*base64"; },
       "`trusted root.tlogs[0].publicKey.rawBytes` is not base64"},
      {"key bytes", [](json& r) { r["ctlogs"][0]["publicKey"]["rawBytes"] = "AAAA"; },
       "`trusted root.ctlogs[0].publicKey.rawBytes` is not a DER SubjectPublicKeyInfo"},
      {"hash", [](json& r) { r["tlogs"][0]["hashAlgorithm"] = "SHA2_384"; }, "is `SHA2_384`"},
      {"certificate",
       [](json& r) { r["certificateAuthorities"][0]["certChain"]["certificates"][0]["rawBytes"] = "AAAA"; },
       "`trusted root.certificateAuthorities[0].certChain.certificates[0].rawBytes` is not a DER X.509 certificate"},
      {"empty chain", [](json& r) { r["timestampAuthorities"][0]["certChain"]["certificates"] = json::array(); },
       "`trusted root.timestampAuthorities[0].certChain.certificates` is empty"},
      {"type", [](json& r) { r["tlogs"] = "everything"; }, "`trusted root.tlogs` must be an array, not string"},
      {"time", [](json& r) { r["ctlogs"][0]["publicKey"]["validFor"]["start"] = "yesterday"; },
       "`trusted root.ctlogs[0].publicKey.validFor.start` `yesterday` is not an RFC 3339 time"},
      {"backwards", [](json& r) { r["certificateAuthorities"][0]["validFor"]["end"] = "2000-01-01T00:00:00Z"; },
       "ends before it starts"},
      {"log id", [](json& r) { r["tlogs"][0]["logId"] = json::object(); },
       "`trusted root.tlogs[0].logId.keyId` is missing"},
  };
  for (const auto& c : cases) {
    json root = good;
    c.change(root);
    INFO(c.what);
    const Error error = refusal(root);
    CHECK(error.code == ErrorCode::kCorruptFile);
    CHECK_THAT(error.message, Catch::Contains(c.message));
  }
}

TEST_CASE("a log key of a kind the library does not know is kept, marked unusable") {
  const testing::TestInstance instance;
  json root = instance.trusted_root();
  root["tlogs"][1]["publicKey"]["keyDetails"] = "ML_DSA_65";
  auto parsed = TrustedRoot::parse(root.dump());
  REQUIRE(parsed);
  CHECK_FALSE(parsed->transparency_logs()[1].key_usable);
  CHECK(parsed->describe().find("ML_DSA_65 (not usable here)") != std::string::npos);
}

TEST_CASE("input that is not a trusted root never crashes the parser") {
  for (const std::string& text :
       {std::string(""), std::string("null"), std::string("[]"), std::string("{\"mediaType\": 7}"),
        std::string(100000, '['), std::string(100000, '{'), "{\"tlogs\": [" + std::string(5000, '[') + "]}"}) {
    auto parsed = TrustedRoot::parse(text);
    REQUIRE_FALSE(parsed);
    CHECK(parsed.error().code == ErrorCode::kCorruptFile);
  }
}

}  // namespace
}  // namespace kernelhub::sigstore
