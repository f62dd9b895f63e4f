#include "kernelhub/sigstore/verify.hpp"

#include <openssl/err.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <thread>

#include "kernelhub/base/internal/base64.hpp"
#include "kernelhub/base/internal/hex.hpp"
#include "kernelhub/base/internal/sha256.hpp"
#include "kernelhub/sigstore/policy.hpp"
#include "kernelhub/sigstore/sign.hpp"
#include "test_instance.hpp"

namespace kernelhub::sigstore {
namespace {

using nlohmann::json;
using testing::BundleOptions;
using testing::LogKind;

const std::string kArtifact = testing::BundleOptions{}.artifact;

struct Fixture {
  testing::TestInstance instance;
  json root_json = instance.trusted_root();

  TrustedRoot root() const { return *TrustedRoot::parse(root_json.dump()); }

  Result<VerifiedBundle> verify_json(const json& bundle, const Artifact& artifact = Artifact::bytes(kArtifact),
                                     const VerifyOptions& options = {}) const {
    auto parsed = Bundle::parse(bundle.dump());
    REQUIRE(parsed);
    return verify(*parsed, artifact, root(), options);
  }
  std::string refusal(const json& bundle, const Artifact& artifact = Artifact::bytes(kArtifact),
                      const VerifyOptions& options = {}) const {
    auto verified = verify_json(bundle, artifact, options);
    REQUIRE_FALSE(verified);
    CHECK(verified.error().code == ErrorCode::kBadSignature);
    return verified.error().message;
  }
};

json& entry_of(json& bundle) {
  return bundle["verificationMaterial"]["tlogEntries"][0];
}

TEST_CASE("a Rekor v1 bundle verifies, and says who signed and when") {
  const Fixture f;
  auto verified = f.verify_json(f.instance.bundle());
  REQUIRE(verified);
  const auto& identity = std::get<CertificateIdentity>(verified->signer.identity);
  CHECK(identity.subject_alternative_names ==
        std::vector<std::string>{
            "https://github.com/huggingface/kernels-community/.github/workflows/build.yaml@refs/heads/main"});
  CHECK(identity.issuer_v1 == "https://token.actions.githubusercontent.com");
  CHECK(identity.issuer_v2 == "https://token.actions.githubusercontent.com");
  CHECK(identity.source_repository_uri == "https://github.com/huggingface/kernels-community");
  CHECK(identity.certificate_der == f.instance.last_leaf_der());
  REQUIRE(verified->times.size() == 1);
  CHECK(verified->times[0].source == TimeSource::kTransparencyLog);
  CHECK(verified->times[0].time == f.instance.leaf_not_before() + std::chrono::seconds{60});
  CHECK(verified->times[0].authority == "https://rekor.test.example");
  REQUIRE(verified->log_entry);
  CHECK(verified->log_entry->log_index == 5);
  CHECK(verified->log_entry->kind == "hashedrekord");
}

TEST_CASE("the artifact may be given as its SHA-256 alone, and another artifact is refused") {
  const Fixture f;
  const json bundle = f.instance.bundle();
  CHECK(f.verify_json(bundle, Artifact::sha256(kernelhub::sha256(kArtifact))));
  CHECK_THAT(f.refusal(bundle, Artifact::bytes("another artifact")),
             Catch::Contains("the bundle signs an artifact whose SHA2_256 is"));
  CHECK_THAT(f.refusal(bundle, Artifact::sha256(kernelhub::sha256("x"))), Catch::Contains("the artifact given has"));
  // Without the digest in the bundle, the signature itself refuses another artifact.
  json bare = bundle;
  bare["messageSignature"].erase("messageDigest");
  CHECK(f.verify_json(bare));
  CHECK_THAT(f.refusal(bare, Artifact::bytes("another artifact")),
             Catch::Contains("the signature does not verify over the artifact"));
}

TEST_CASE("v0.1 and v0.2 bundles verify, v0.1 with its inclusion promise only") {
  const Fixture f;
  for (const char* media_type : {"application/vnd.dev.sigstore.bundle+json;version=0.1",
                                 "application/vnd.dev.sigstore.bundle+json;version=0.2"}) {
    BundleOptions options;
    options.media_type = media_type;
    INFO(media_type);
    CHECK(f.verify_json(f.instance.bundle(options)));
  }
  BundleOptions v01;
  v01.media_type = "application/vnd.dev.sigstore.bundle+json;version=0.1";
  json promise_only = f.instance.bundle(v01);
  entry_of(promise_only).erase("inclusionProof");
  CHECK(f.verify_json(promise_only));
  // Without a checkpoint, a v0.1 proof is ignored (its root hash is nobody's word).
  json unsigned_proof = f.instance.bundle(v01);
  entry_of(unsigned_proof)["inclusionProof"].erase("checkpoint");
  entry_of(unsigned_proof)["inclusionProof"]["rootHash"] = base64_encode(std::string(32, 'x'));
  CHECK(f.verify_json(unsigned_proof));
}

TEST_CASE("a certificate chain that carries a root is refused") {
  const Fixture f;
  BundleOptions options;
  options.media_type = "application/vnd.dev.sigstore.bundle+json;version=0.2";
  json bundle = f.instance.bundle(options);
  bundle["verificationMaterial"]["x509CertificateChain"]["certificates"].push_back(
      {{"rawBytes", base64_encode(f.instance.root_certificate_der())}});
  CHECK_THAT(f.refusal(bundle), Catch::Contains("carries a root certificate"));
}

TEST_CASE("the certificate must chain to a CA of the root valid at the signing time, with an SCT and codeSigning") {
  const Fixture f;
  // Signed after the certificate expired.
  BundleOptions late;
  late.signed_after = 700;
  CHECK_THAT(f.refusal(f.instance.bundle(late)), Catch::Contains("not at 2026-01-01T00:11:40Z"));
  // The CA's own trust period ended before the signing.
  Fixture ended;
  ended.root_json["certificateAuthorities"][0]["validFor"]["end"] = "2025-12-31T00:00:00Z";
  CHECK_THAT(
      ended.refusal(ended.instance.bundle()),
      Catch::Contains("`https://fulcio.test.example` is trusted from 2025-01-01T00:00:00Z to 2025-12-31T00:00:00Z"));
  // Another CA.
  const testing::TestInstance stranger;
  CHECK_THAT(f.refusal(stranger.bundle()), Catch::Contains("which the trusted root"));
  BundleOptions no_sct;
  no_sct.leaf.embed_sct = false;
  CHECK_THAT(f.refusal(f.instance.bundle(no_sct)), Catch::Contains("has no embedded SCT"));
  Fixture other_ct;
  other_ct.root_json["ctlogs"][0]["publicKey"]["rawBytes"] = f.root_json["tlogs"][0]["publicKey"]["rawBytes"];
  CHECK_THAT(other_ct.refusal(other_ct.instance.bundle()),
             Catch::Contains("SCT 1 does not verify with the key of the CT log `https://ctfe.test.example`"));
  Fixture no_ct;
  no_ct.root_json["ctlogs"] = json::array();
  CHECK_THAT(no_ct.refusal(no_ct.instance.bundle()), Catch::Contains("which the trusted root does not list"));
  BundleOptions server;
  server.leaf.code_signing = false;
  CHECK_THAT(f.refusal(f.instance.bundle(server)), Catch::Contains("does not include codeSigning"));
}

TEST_CASE("the log entry's promise, proof and checkpoint are each checked") {
  const Fixture f;
  json moved = f.instance.bundle();
  entry_of(moved)["integratedTime"] = std::to_string(1767225600 + 61);
  CHECK_THAT(f.refusal(moved), Catch::Contains("inclusion promise (signed entry timestamp) does not verify"));
  json flipped = f.instance.bundle();
  auto hash = *base64_decode(entry_of(flipped)["inclusionProof"]["hashes"][2].get<std::string>());
  hash[0] = static_cast<char>(hash[0] ^ 1);
  entry_of(flipped)["inclusionProof"]["hashes"][2] = base64_encode(hash);
  CHECK_THAT(f.refusal(flipped), Catch::Contains("the inclusion proof leads to the root hash"));
  BundleOptions elsewhere;
  elsewhere.checkpoint_origin = "rekor.elsewhere.example - 42";
  CHECK_THAT(f.refusal(f.instance.bundle(elsewhere)), Catch::Contains("is for the log `rekor.elsewhere.example - 42`"));
  Fixture unlisted;
  unlisted.root_json["tlogs"].erase(0);
  CHECK_THAT(unlisted.refusal(unlisted.instance.bundle()),
             Catch::Contains("does not list: a bundle of another Sigstore instance?"));
  json two = f.instance.bundle();
  two["verificationMaterial"]["tlogEntries"].push_back(entry_of(two));
  CHECK_THAT(f.refusal(two), Catch::Contains("carries 2 transparency log entries"));
  json none = f.instance.bundle();
  none["verificationMaterial"]["tlogEntries"] = json::array();
  CHECK_THAT(f.refusal(none), Catch::Contains("has no transparency log entry"));
}

TEST_CASE("a log entry of another signing does not vouch for this one") {
  const Fixture f;
  const json first = f.instance.bundle();
  json second = f.instance.bundle();  // the same artifact, another certificate and signature
  second["verificationMaterial"]["tlogEntries"] = first["verificationMaterial"]["tlogEntries"];
  CHECK_THAT(f.refusal(second), Catch::Contains("the transparency log entry records another signature"));
}

TEST_CASE("a Rekor v2 bundle verifies on its RFC 3161 timestamp alone") {
  const Fixture f;
  BundleOptions options;
  options.log = LogKind::kRekorV2;
  const json bundle = f.instance.bundle(options);
  auto verified = f.verify_json(bundle);
  REQUIRE(verified);
  REQUIRE(verified->times.size() == 1);
  CHECK(verified->times[0].source == TimeSource::kTimestampAuthority);
  CHECK(verified->times[0].authority == "https://tsa.test.example");
  CHECK(verified->log_entry->version == "0.0.2");
  CHECK(f.verify_json(bundle, Artifact::sha256(kernelhub::sha256(kArtifact))));

  // The TSA's trust period is closed: its last instant still counts, the one after does not.
  const auto stamped = f.instance.leaf_not_before() + std::chrono::seconds{60};
  Fixture inclusive;
  inclusive.root_json["timestampAuthorities"][0]["validFor"]["end"] = to_rfc3339(stamped);
  CHECK(inclusive.verify_json(inclusive.instance.bundle(options)));
  Fixture ended;
  ended.root_json["timestampAuthorities"][0]["validFor"]["end"] = to_rfc3339(stamped - std::chrono::microseconds{1});
  CHECK_THAT(ended.refusal(ended.instance.bundle(options)),
             Catch::Contains("outside the period the root trusts the TSA for"));
  Fixture untrusted;
  untrusted.root_json["timestampAuthorities"][0]["certChain"]["certificates"] =
      untrusted.root_json["certificateAuthorities"][0]["certChain"]["certificates"];
  CHECK_THAT(untrusted.refusal(untrusted.instance.bundle(options)),
             Catch::Contains("is not one a trusted timestamp authority made"));
  Fixture no_tsa;
  no_tsa.root_json["timestampAuthorities"] = json::array();
  CHECK_THAT(no_tsa.refusal(no_tsa.instance.bundle(options)), Catch::Contains("lists no timestamp authority"));

  // A timestamp over another signature; the same timestamp twice.
  json other = f.instance.bundle(options);
  other["verificationMaterial"]["timestampVerificationData"] =
      bundle["verificationMaterial"]["timestampVerificationData"];
  CHECK_THAT(f.refusal(other), Catch::Contains("RFC 3161 timestamp"));
  json twice = bundle;
  auto& stamps = twice["verificationMaterial"]["timestampVerificationData"]["rfc3161Timestamps"];
  stamps.push_back(stamps[0]);
  CHECK_THAT(f.refusal(twice), Catch::Contains("the same RFC 3161 timestamp twice"));
  // Signed outside the certificate's validity, by the TSA's word.
  BundleOptions late = options;
  late.signed_after = 601;
  CHECK_THAT(f.refusal(f.instance.bundle(late)), Catch::Contains("not at 2026-01-01T00:10:01Z"));
}

TEST_CASE("a Rekor v1 bundle may carry a timestamp as well, and both times are verified") {
  const Fixture f;
  BundleOptions options;
  options.timestamp = true;
  auto verified = f.verify_json(f.instance.bundle(options));
  REQUIRE(verified);
  CHECK(verified->times.size() == 2);
}

TEST_CASE(
    "DSSE bundles: the envelope's signature, the statement's subject, the log entry (dsse 0.0.1 and hashedrekord "
    "0.0.2)") {
  const Fixture f;
  for (const LogKind log : {LogKind::kRekorV1, LogKind::kRekorV2}) {
    BundleOptions options;
    options.dsse = true;
    options.log = log;
    const json bundle = f.instance.bundle(options);
    INFO((log == LogKind::kRekorV1 ? "dsse 0.0.1" : "hashedrekord 0.0.2"));
    CHECK(f.verify_json(bundle));
    CHECK(f.verify_json(bundle, Artifact::sha256(kernelhub::sha256(kArtifact))));
    CHECK_THAT(f.refusal(bundle, Artifact::bytes("not the subject")),
               Catch::Contains("is not a subject of the in-toto statement"));
    json edited = bundle;
    auto payload = *base64_decode(edited["dsseEnvelope"]["payload"].get<std::string>());
    payload.insert(1, " ");
    edited["dsseEnvelope"]["payload"] = base64_encode(payload);
    CHECK_THAT(f.refusal(edited), Catch::Contains("the DSSE envelope's signature does not verify"));
    // A genuine envelope (and its timestamp, if any) with another signing's certificate and entry.
    json other = f.instance.bundle(options);
    other["dsseEnvelope"] = bundle["dsseEnvelope"];
    if (bundle["verificationMaterial"].contains("timestampVerificationData")) {
      other["verificationMaterial"]["timestampVerificationData"] =
          bundle["verificationMaterial"]["timestampVerificationData"];
    }
    CHECK_THAT(f.refusal(other), Catch::Contains("the DSSE envelope's signature does not verify"));
  }
}

TEST_CASE("managed keys: a keyed bundle needs its key, and a key does not verify a certificate bundle") {
  const Fixture f;
  const std::string key = f.instance.managed_public_key_pem();
  auto signed_bundle = sign_with_key(f.instance.managed_private_key_pem(), kArtifact);
  REQUIRE(signed_bundle);
  const json keyed = json::parse(*signed_bundle);
  VerifyOptions with_key;
  with_key.public_key_pem = key;
  CHECK_THAT(f.refusal(keyed, Artifact::bytes(kArtifact), with_key), Catch::Contains("needs allow_no_tlog_for_keys"));
  with_key.allow_no_tlog_for_keys = true;
  auto verified = f.verify_json(keyed, Artifact::bytes(kArtifact), with_key);
  REQUIRE(verified);
  CHECK(verified->times.empty());
  CHECK_FALSE(verified->log_entry);
  const auto& identity = std::get<KeyIdentity>(verified->signer.identity);
  CHECK(identity.fingerprint == to_hex(kernelhub::sha256(identity.public_key_der)));
  CHECK(f.verify_json(keyed, Artifact::sha256(kernelhub::sha256(kArtifact)), with_key));
  CHECK_THAT(f.refusal(keyed, Artifact::bytes("other"), with_key), Catch::Contains("signs an artifact whose"));
  CHECK_THAT(f.refusal(keyed), Catch::Contains("signed with a managed key (hint `"));
  CHECK_THAT(f.refusal(f.instance.bundle(), Artifact::bytes(kArtifact), with_key),
             Catch::Contains("a managed key was given, and the bundle carries a signing certificate"));
  const testing::TestInstance other;
  VerifyOptions wrong_key = with_key;
  wrong_key.public_key_pem = other.managed_public_key_pem();
  CHECK_THAT(f.refusal(keyed, Artifact::bytes(kArtifact), wrong_key), Catch::Contains("with the managed key sha256:"));
  VerifyOptions not_a_key = with_key;
  not_a_key.public_key_pem = "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n";
  auto refused = f.verify_json(keyed, Artifact::bytes(kArtifact), not_a_key);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace kernelhub::sigstore

namespace kernelhub::sigstore {
namespace {

TEST_CASE("a refused input leaves no OpenSSL error behind for the thread's next OpenSSL user") {
  ERR_clear_error();
  const Fixture f;
  json broken_root = f.root_json;
  broken_root["certificateAuthorities"][0]["certChain"]["certificates"][0]["rawBytes"] = base64_encode("not DER");
  CHECK_FALSE(TrustedRoot::parse(broken_root.dump()));
  CHECK(ERR_peek_error() == 0);
  json broken_bundle = f.instance.bundle();
  broken_bundle["verificationMaterial"]["certificate"]["rawBytes"] = base64_encode("not DER either");
  CHECK_FALSE(f.verify_json(broken_bundle));
  CHECK(ERR_peek_error() == 0);
  CHECK_FALSE(Signer::from_certificate_der("x"));
  CHECK_FALSE(Signer::from_public_key_pem("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"));
  CHECK_FALSE(PublicKeyRule::from_pem("x"));
  CHECK_FALSE(sign_with_key("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", "x"));
  CHECK(ERR_peek_error() == 0);
}

}  // namespace
}  // namespace kernelhub::sigstore

namespace kernelhub::sigstore {
namespace {

TEST_CASE("several threads verify against one trusted root at once") {
  const Fixture f;
  const TrustedRoot root = f.root();
  BundleOptions rekor_v2;
  rekor_v2.log = LogKind::kRekorV2;
  const std::vector<Bundle> bundles = {*Bundle::parse(f.instance.bundle().dump()),
                                       *Bundle::parse(f.instance.bundle(rekor_v2).dump())};
  std::atomic<int> verified{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 5; ++i) {
        if (verify(bundles[(t + i) % 2], Artifact::bytes(kArtifact), root)) ++verified;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(verified == 20);
}

}  // namespace
}  // namespace kernelhub::sigstore
