// The signature check of every load (fetch/internal/kernelhub/fetch/internal/signature_check.hpp) over
// variant folders signed with a managed key (sigstore/sign.hpp), and the signers file. Bundles
// with Fulcio certificates come from a test Sigstore in tests/python/ (test_sigstore_*.py).
#include "kernelhub/fetch/internal/signature_check.hpp"

#include <openssl/evp.h>
#include <openssl/pem.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <memory>

#include "kernelhub/base/internal/read_file.hpp"
#include "kernelhub/signing/internal/sign.hpp"
#include "kernelhub/sigstore/sign.hpp"
#include "kernels_words.hpp"
#include "support/temp_dir.hpp"

namespace kernelhub {
namespace {

namespace fs = std::filesystem;

// A fresh ECDSA P-256 key pair as PEM (what cosign makes, exported as PKCS#8).
struct KeyPair {
  std::string private_pem;
  std::string public_pem;

  static KeyPair generate() {
    std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(EVP_EC_gen("P-256"), &EVP_PKEY_free);
    REQUIRE(key);
    const auto pem = [&](bool is_private) {
      std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), &BIO_free);
      const int ok = is_private ? PEM_write_bio_PrivateKey(bio.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr)
                                : PEM_write_bio_PUBKEY(bio.get(), key.get());
      REQUIRE(ok == 1);
      char* data = nullptr;
      const long size = BIO_get_mem_data(bio.get(), &data);
      return std::string(data, static_cast<std::size_t>(size));
    };
    return {pem(true), pem(false)};
  }
};

constexpr std::string_view kRepo = "acme/fast-kernels";
constexpr std::string_view kVariant = "torch215-cxx11-cpu-x86_64-linux";

// A variant folder with a metadata.json (and, when signed, its bundle).
struct Variant {
  testing::TempDir dir{"signature_check"};

  Variant() { write("metadata.json", metadata_json(1)); }
  static std::string metadata_json(int version) {
    return R"({"name": "fast", "id": "_fast_cpu_1", "version": )" + std::to_string(version) +
           R"(, "license": "MIT", "python-depends": [], "backend": {"type": "cpu"}})";
  }
  void write(const std::string& name, std::string_view text) const {
    std::ofstream out(dir.path() / name, std::ios::binary);
    out << text;
  }
  void sign(const KeyPair& key) const {
    const std::string bundle =
        sigstore::sign_with_key(key.private_pem, read_file(dir.path() / "metadata.json").value()).value();
    write(std::string(kSigstoreBundleName), bundle);
  }
};

SignatureSettings settings_with(std::vector<Signer> signers = {}, bool require = false) {
  SignatureSettings settings = SignatureSettings::from_environment(map_environment({}), require).value();
  for (auto& signer : signers) settings.signers.add(std::move(signer));
  return settings;
}

Signer key_signer(const KeyPair& key, std::string scope = "acme") {
  return Signer{std::move(scope), SigningKey{key.public_pem}, "test"};
}

SignatureVerdict check(const Variant& v, const SignatureSettings& settings,
                       const SignatureRecords& records = SignatureRecords(std::nullopt, nullptr)) {
  return check_signature(v.dir.path(), kRepo, kVariant, "v1", settings, records, nullptr).value();
}

using Status = SignatureVerdict::Status;

TEST_CASE("an unsigned variant: a warning by default, refused when required or when its org has signers") {
  const Variant v;
  const auto verdict = check(v, settings_with());
  CHECK(verdict.status == Status::kUnsigned);
  CHECK_FALSE(verdict.required);
  CHECK(refuse_unless_accepted(verdict, kRepo, kVariant));
  const Metadata metadata = Metadata::read(v.dir.path()).value();
  const auto warning = signature_warning(verdict, metadata, kRepo, kVariant);
  REQUIRE(warning);
  CHECK(kernels_words::message(*warning) ==
        "Kernel 'fast' variant 'torch215-cxx11-cpu-x86_64-linux': not signed, so its integrity cannot be verified");

  const auto required = check(v, settings_with({}, /*require=*/true));
  const auto refused = refuse_unless_accepted(required, kRepo, kVariant);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == ErrorCode::kMissingSignature);
  CHECK_THAT(refused.error().message,
             Catch::Contains("is not signed") && Catch::Contains("KERNELHUB_REQUIRE_SIGNATURE"));

  const auto configured = check(v, settings_with({key_signer(KeyPair::generate())}));
  CHECK(configured.configured);
  const auto stripped = refuse_unless_accepted(configured, kRepo, kVariant);
  REQUIRE_FALSE(stripped);
  CHECK(stripped.error().code == ErrorCode::kMissingSignature);
  CHECK_THAT(stripped.error().message, Catch::Contains("signers are configured for `acme/fast-kernels` or `acme`"));
}

TEST_CASE("a bundle of a configured key is accepted; of another key it does not verify and is always refused") {
  const KeyPair acme = KeyPair::generate();
  const KeyPair mallory = KeyPair::generate();
  const Variant v;
  v.sign(acme);
  const auto accepted = check(v, settings_with({key_signer(acme)}));
  CHECK(accepted.status == Status::kAccepted);
  CHECK_THAT(accepted.signer, Catch::StartsWith("key sha256:"));
  CHECK(refuse_unless_accepted(accepted, kRepo, kVariant));
  CHECK_FALSE(signature_warning(accepted, Metadata::read(v.dir.path()).value(), kRepo, kVariant));

  // A repo-scoped signer of another repo of the org does not count.
  CHECK(check(v, settings_with({key_signer(acme, "acme/other")})).status == Status::kNotAccepted);

  const auto forged = check(v, settings_with({key_signer(mallory)}));
  CHECK(forged.status == Status::kDoesNotVerify);
  const auto refused = refuse_unless_accepted(forged, kRepo, kVariant);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == ErrorCode::kBadSignature);
  CHECK_THAT(refused.error().message, Catch::Contains("does not verify"));
}

TEST_CASE("a keyed bundle with no key configured is what kernels warns about: not accepted by the default policy") {
  const Variant v;
  v.sign(KeyPair::generate());
  const auto verdict = check(v, settings_with());
  CHECK(verdict.status == Status::kNotAccepted);
  CHECK_THAT(verdict.why_not, Catch::Contains("managed key") && Catch::Contains("no key is configured"));
  CHECK(refuse_unless_accepted(verdict, kRepo, kVariant));  // warned about, not refused
  CHECK(signature_warning(verdict, Metadata::read(v.dir.path()).value(), kRepo, kVariant));
  const auto required = refuse_unless_accepted(check(v, settings_with({}, true)), kRepo, kVariant);
  REQUIRE_FALSE(required);
  CHECK(required.error().code == ErrorCode::kUntrustedPublisher);
}

TEST_CASE("one byte of metadata.json changed after signing: the bundle does not verify") {
  const KeyPair acme = KeyPair::generate();
  const Variant v;
  v.sign(acme);
  v.write("metadata.json", Variant::metadata_json(2));
  const auto verdict = check(v, settings_with({key_signer(acme)}));
  CHECK(verdict.status == Status::kDoesNotVerify);
  CHECK_FALSE(refuse_unless_accepted(verdict, kRepo, kVariant));
}

TEST_CASE("a bundle that is not one is refused whatever the configuration, naming what is wrong") {
  const Variant v;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{not json", "JSON"},
      {R"({"mediaType": "application/vnd.dev.sigstore.bundle+json;version=9.9"})", "mediaType"},
      {std::string(200, '['), "nest"},
  };
  for (const auto& [text, what] : cases) {
    v.write(std::string(kSigstoreBundleName), text);
    const auto verdict = check(v, settings_with());
    CHECK(verdict.status == Status::kMalformed);
    CHECK_THAT(verdict.why_not, Catch::Contains(what, Catch::CaseSensitive::No));
    const auto refused = refuse_unless_accepted(verdict, kRepo, kVariant);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code == ErrorCode::kBadSignature);
  }
  v.write(std::string(kSigstoreBundleName), std::string(2u << 20, ' '));  // larger than any bundle
  CHECK(check(v, settings_with()).status == Status::kMalformed);
}

TEST_CASE("a warm check finds the record and checks the policy again against it") {
  const KeyPair acme = KeyPair::generate();
  const Variant v;
  v.sign(acme);
  const testing::TempDir state("signature_records");
  VerifiedSignatures memory;
  const SignatureRecords records(state.path(), &memory);
  const auto first = check(v, settings_with({key_signer(acme)}), records);
  CHECK(first.status == Status::kAccepted);
  CHECK_FALSE(first.from_record);
  CHECK(fs::exists(state.path() / "signatures"));

  // A later process: the record file alone, no memory.
  const SignatureRecords later(state.path(), nullptr);
  const auto warm = check(v, settings_with({key_signer(acme)}), later);
  CHECK(warm.status == Status::kAccepted);
  CHECK(warm.from_record);
  // The policy changed: the record proves the bundle, not that its signer is still accepted.
  CHECK(check(v, settings_with(), later).status == Status::kNotAccepted);
  // Another metadata.json: another key, no record.
  v.write("metadata.json", Variant::metadata_json(3));
  const auto changed = check(v, settings_with({key_signer(acme)}), later);
  CHECK_FALSE(changed.from_record);
  CHECK(changed.status == Status::kDoesNotVerify);
}

TEST_CASE("a variant signed with kernelhub.sig (layout v2, no bundle) still loads where its key is trusted") {
  const testing::TempDir root("legacy_signature");
  const fs::path dir = root.path() / std::string(kVariant);
  fs::create_directories(dir);
  std::ofstream(dir / "metadata.json") << Variant::metadata_json(1);
  const auto key = signing::PrivateKey::generate().value();
  REQUIRE(signing::sign_variant(dir, {std::string(kRepo), 1, std::string(kVariant), ""}, key));
  SignatureSettings settings = settings_with();
  const SignatureRecords none(std::nullopt, nullptr);
  // No key trusted: the old signature is not looked at, as before.
  CHECK(check_signature(dir, kRepo, kVariant, "v1", settings, none, nullptr).value().status == Status::kUnsigned);
  REQUIRE(settings.legacy_keys.add("acme", key.public_key(), "test"));
  const auto verdict = check_signature(dir, kRepo, kVariant, "v1", settings, none, nullptr).value();
  CHECK(verdict.status == Status::kAccepted);
  CHECK_THAT(verdict.signer, Catch::StartsWith("kernelhub.sig key"));
  // Its manifest still binds the version: another version's is refused.
  const auto replayed = check_signature(dir, kRepo, kVariant, "v2", settings, none, nullptr);
  REQUIRE_FALSE(replayed);
  CHECK(replayed.error().code == ErrorCode::kBadSignature);
}

TEST_CASE("the signers file: identities and keys per scope, and every mistake named with its line") {
  const testing::TempDir dir("signers");
  const KeyPair key = KeyPair::generate();
  std::ofstream(dir.path() / "bob.pem") << key.public_pem;
  Signers signers;
  REQUIRE(signers.add_from_toml(R"(
[[signer]]
scope = ["acme", "bob/fast"]
issuer = "https://token.actions.githubusercontent.com"
source-repository = "https://github.com/acme/kernels"
workflows = ["https://github.com/acme/kernels/.github/workflows/build.yaml@refs/heads/main"]

[[signer]]
scope = "bob/fast"
public-key = "bob.pem"
)",
                                "signers.toml", dir.path()));
  CHECK(signers.for_repo("acme/x").size() == 1);
  CHECK(signers.for_repo("bob/fast").size() == 2);
  CHECK(signers.for_repo("bob/slow").empty());
  CHECK(signers.for_repo("acmeco/x").empty());
  const std::vector<Signer> acme = signers.for_repo("acme/x");
  const auto& identity = std::get<WorkflowIdentity>(acme.front().who);
  CHECK(identity.source_repository == "https://github.com/acme/kernels");
  CHECK(identity.workflows.size() == 1);
  const std::vector<Signer> bob = signers.for_repo("bob/fast");
  CHECK(std::get<SigningKey>(bob[1].who).pem == key.public_pem);

  const std::vector<std::pair<std::string, std::string>> bad = {
      {"[[signer]]\nissuer = \"x\"\nworkflows = [\"w\"]\n", "signers.toml:1: a signer needs a `scope`"},
      {"[[signer]]\nscope = \"a/b/c\"\npublic-key = \"bob.pem\"\n", "neither an org nor ORG/NAME"},
      {"[[signer]]\nscope = \"acme\"\nissuer = \"x\"\n", "needs a `source-repository` or `workflows`"},
      {"[[signer]]\nscope = \"acme\"\nissuer = \"x\"\npublic-key = \"bob.pem\"\n", "not both"},
      {"[[signer]]\nscope = \"acme\"\nissur = \"x\"\n", "unknown key `issur`"},
      {"[[signer]]\nscope = \"acme\"\npublic-key = \"missing.pem\"\n", "missing.pem"},
      {"[signer]\nscope = \"acme\"\n", "array of tables"},
      {"[[signer]\n", "not valid TOML"},
  };
  for (const auto& [text, message] : bad) {
    Signers none;
    const auto added = none.add_from_toml(text, "signers.toml", dir.path());
    REQUIRE_FALSE(added);
    CHECK(added.error().code != ErrorCode::kInternal);
    CHECK_THAT(added.error().message, Catch::Contains(message));
  }
}

TEST_CASE("the signers file named by KERNELHUB_SIGNERS must exist; the default one may be absent") {
  const testing::TempDir dir("signers_env");
  const signing::TrustedKeys none;
  CHECK(Signers::from_environment(map_environment({{"HOME", dir.path().string()}}), none));
  const auto missing =
      Signers::from_environment(map_environment({{"KERNELHUB_SIGNERS", (dir.path() / "nope.toml").string()}}), none);
  REQUIRE_FALSE(missing);
  CHECK_THAT(missing.error().message, Catch::Contains("KERNELHUB_SIGNERS"));
}

}  // namespace
}  // namespace kernelhub
