#include "kernelhub/sigstore/bundle.hpp"

#include <catch2/catch.hpp>

#include "test_instance.hpp"

namespace kernelhub::sigstore {
namespace {

using nlohmann::json;

std::string refusal(const std::string& text) {
  auto parsed = Bundle::parse(text);
  REQUIRE_FALSE(parsed);
  CHECK(parsed.error().code == ErrorCode::kCorruptFile);
  return parsed.error().message;
}

TEST_CASE("a v0.3 bundle parses into its parts, bytes decoded") {
  const testing::TestInstance instance;
  const json bundle = instance.bundle();
  auto parsed = Bundle::parse(bundle.dump());
  REQUIRE(parsed);
  CHECK(parsed->version == BundleVersion::k0_3);
  REQUIRE(parsed->certificates.size() == 1);
  CHECK(parsed->certificates[0] == instance.last_leaf_der());
  REQUIRE(parsed->tlog_entries.size() == 1);
  const auto& entry = parsed->tlog_entries[0];
  CHECK(entry.log_index == 5);
  CHECK(entry.kind == "hashedrekord");
  CHECK(entry.version == "0.0.1");
  CHECK(entry.integrated_time == 1767225600 + 60);
  REQUIRE(entry.inclusion_proof);
  CHECK(entry.inclusion_proof->tree_size == 11);
  CHECK(entry.inclusion_proof->hashes.size() == 4);
  CHECK(entry.canonicalized_body.starts_with("{\"apiVersion\":\"0.0.1\""));
  REQUIRE(std::holds_alternative<MessageSignature>(parsed->content));
  CHECK(std::get<MessageSignature>(parsed->content).message_digest->algorithm == "SHA2_256");
  CHECK(parsed->signature() == std::get<MessageSignature>(parsed->content).signature);
}

TEST_CASE("every media type the library reads parses, v0.1 and v0.2 with a chain") {
  const testing::TestInstance instance;
  for (const auto& [media_type, version] : std::vector<std::pair<std::string, BundleVersion>>{
           {"application/vnd.dev.sigstore.bundle+json;version=0.1", BundleVersion::k0_1},
           {"application/vnd.dev.sigstore.bundle+json;version=0.2", BundleVersion::k0_2},
           {"application/vnd.dev.sigstore.bundle+json;version=0.3", BundleVersion::k0_3},
           {"application/vnd.dev.sigstore.bundle.v0.3+json", BundleVersion::k0_3}}) {
    testing::BundleOptions options;
    options.media_type = media_type;
    auto parsed = Bundle::parse(instance.bundle(options).dump());
    INFO(media_type);
    REQUIRE(parsed);
    CHECK(parsed->version == version);
  }
}

TEST_CASE("malformed bundles are refused as corrupt, naming the field") {
  const testing::TestInstance instance;
  const json good = instance.bundle();
  const auto changed = [&](const std::function<void(json&)>& change) {
    json b = good;
    change(b);
    return b.dump();
  };
  CHECK_THAT(refusal("{\"mediaType\": "), Catch::Contains("bundle is not valid JSON"));
  CHECK_THAT(refusal("[1, 2]"), Catch::Contains("must be a JSON object, not array"));
  CHECK_THAT(
      refusal(changed([](json& b) { b["mediaType"] = "application/vnd.dev.sigstore.bundle+json;version=99.9"; })),
      Catch::Contains("`bundle.mediaType` is `application/vnd.dev.sigstore.bundle+json;version=99.9`, not a "
                      "bundle version this library reads"));
  CHECK_THAT(refusal(changed([](json& b) { b["messageSignature"]["signature"] = "!!!!not base64"; })),
             Catch::Contains("`bundle.messageSignature.signature` is not base64"));
  CHECK_THAT(refusal(changed([](json& b) { b["verificationMaterial"]["tlogEntries"][0]["logIndex"] = "-1"; })),
             Catch::Contains("`bundle.verificationMaterial.tlogEntries[0].logIndex` is -1: a log index is never "
                             "negative"));
  CHECK_THAT(
      refusal(changed([](json& b) { b["verificationMaterial"]["tlogEntries"][0]["logIndex"] = json::object(); })),
      Catch::Contains("`bundle.verificationMaterial.tlogEntries[0].logIndex` must be a 64-bit integer, not "
                      "object"));
  CHECK_THAT(refusal(changed(
                 [](json& b) { b["verificationMaterial"]["tlogEntries"][0]["logIndex"] = "99999999999999999999"; })),
             Catch::Contains("must be a 64-bit integer"));
  CHECK_THAT(refusal(changed([](json& b) { b["verificationMaterial"]["tlogEntries"][0].erase("canonicalizedBody"); })),
             Catch::Contains("`bundle.verificationMaterial.tlogEntries[0].canonicalizedBody` is missing"));
  CHECK_THAT(refusal(changed([](json& b) {
               b["verificationMaterial"]["publicKey"] = {{"hint", "abc"}};
             })),
             Catch::Contains("must hold exactly one of `certificate`, `x509CertificateChain` and `publicKey`, not 2"));
  CHECK_THAT(refusal(changed([&](json& b) {
               b["dsseEnvelope"] = {{"payload", ""}, {"payloadType", "x"}};
             })),
             Catch::Contains("exactly one of `messageSignature` and `dsseEnvelope`"));
  CHECK_THAT(refusal(changed([](json& b) { b.erase("messageSignature"); })),
             Catch::Contains("exactly one of `messageSignature` and `dsseEnvelope`"));
  CHECK_THAT(refusal(changed(
                 [](json& b) { b["verificationMaterial"]["tlogEntries"][0]["inclusionProof"].erase("checkpoint"); })),
             Catch::Contains("has no `inclusionProof` with a `checkpoint`, which a version 0.3 bundle must carry"));
  CHECK_THAT(refusal(changed([](json& b) { b["verificationMaterial"]["tlogEntries"][0].erase("inclusionPromise"); })),
             Catch::Contains("has no `inclusionPromise`, and the bundle no RFC 3161 timestamp"));
}

TEST_CASE(
    "version rules: v0.1 needs an inclusion promise, v0.2 a chain, not a bare certificate, and empty chains are "
    "refused") {
  const testing::TestInstance instance;
  testing::BundleOptions v01;
  v01.media_type = "application/vnd.dev.sigstore.bundle+json;version=0.1";
  json bundle = instance.bundle(v01);
  bundle["verificationMaterial"]["tlogEntries"][0].erase("inclusionPromise");
  CHECK_THAT(refusal(bundle.dump()),
             Catch::Contains("has no `inclusionPromise`, which a version 0.1 bundle must carry"));
  // A v0.1 bundle may carry only the promise.
  bundle = instance.bundle(v01);
  bundle["verificationMaterial"]["tlogEntries"][0].erase("inclusionProof");
  CHECK(Bundle::parse(bundle.dump()));
  bundle["verificationMaterial"]["x509CertificateChain"]["certificates"] = json::array();
  CHECK_THAT(refusal(bundle.dump()),
             Catch::Contains("certificates` is empty: the bundle names no signing certificate"));
  testing::BundleOptions v02;
  v02.media_type = "application/vnd.dev.sigstore.bundle+json;version=0.2";
  bundle = instance.bundle(v02);
  bundle["verificationMaterial"]["certificate"] =
      bundle["verificationMaterial"]["x509CertificateChain"]["certificates"][0];
  bundle["verificationMaterial"].erase("x509CertificateChain");
  CHECK_THAT(refusal(bundle.dump()), Catch::Contains("appeared in bundle version 0.3"));
}

TEST_CASE("hostile input never crashes the parser: deep nesting, huge documents, garbage") {
  CHECK_THAT(refusal(std::string(1 << 20, '[')), Catch::Contains("nested more than 32 levels deep"));
  CHECK_THAT(refusal("{\"a\":" + std::string(200, '{') + std::string(200, '}') + "}"),
             Catch::Contains("nested more than 32 levels deep"));
  // 16 MB of base64 where a signature goes: read, decoded, and the bundle still refused for what
  // it lacks, without trouble.
  const json huge = {{"mediaType", "application/vnd.dev.sigstore.bundle.v0.3+json"},
                     {"verificationMaterial", {{"publicKey", {{"hint", "x"}}}}},
                     {"messageSignature", {{"signature", std::string(16 << 20, 'A')}}}};
  auto parsed = Bundle::parse(huge.dump());
  REQUIRE(parsed);  // well-formed; verify() refuses it
  CHECK(std::get<MessageSignature>(parsed->content).signature.size() == 12u << 20);
  for (const std::string& garbage : {std::string("\xff\xfe\x00", 3), std::string("{\"mediaType\":\"\\ud800\"}"),
                                     std::string("{}"), std::string("\"bundle\""), std::string(4096, '\0')}) {
    CHECK_FALSE(Bundle::parse(garbage));
  }
}

}  // namespace
}  // namespace kernelhub::sigstore
