#include "kernelhub/sigstore/policy.hpp"

#include <catch2/catch.hpp>

#include "test_instance.hpp"

namespace kernelhub::sigstore {
namespace {

constexpr const char* kGithub = "https://token.actions.githubusercontent.com";

Signer workflow_signer(const std::string& repo, const std::string& workflow,
                       const std::string& ref = "refs/heads/main") {
  CertificateIdentity identity;
  const std::string uri = "https://github.com/" + repo + "/.github/workflows/" + workflow + "@" + ref;
  identity.subject_alternative_names = {uri};
  identity.issuer_v1 = kGithub;
  identity.issuer_v2 = kGithub;
  identity.source_repository_uri = "https://github.com/" + repo;
  identity.build_signer_uri = uri;
  return Signer{identity};
}

std::string mismatch(const Policy& policy, const Signer& signer) {
  auto held = check_policy(policy, signer);
  REQUIRE_FALSE(held);
  CHECK(held.error().code == ErrorCode::kUntrustedPublisher);
  return held.error().message;
}

TEST_CASE("kernels_default() is the kernels package's DEFAULT_POLICY, rule for rule") {
  CHECK(Policy::kernels_default().describe() ==
        "any of:\n"
        "  certificate with issuer `https://token.actions.githubusercontent.com` (V1 and V2), source repository "
        "`https://github.com/huggingface/kernels-community`, build signer one of "
        "`https://github.com/huggingface/kernels-community/.github/workflows/build.yaml@refs/heads/main`, "
        "`https://github.com/huggingface/kernels-community/.github/workflows/build-mac.yaml@refs/heads/main`, "
        "`https://github.com/huggingface/kernels-community/.github/workflows/build-windows.yaml@refs/heads/main`, "
        "`https://github.com/huggingface/kernels-community/.github/workflows/sign-old-builds.yaml@refs/heads/main`\n"
        "  certificate with issuer `https://token.actions.githubusercontent.com` (V1 and V2), source repository "
        "`https://github.com/huggingface/kernels-community-rs`, build signer one of "
        "`https://github.com/huggingface/kernels-community-rs/.github/workflows/build.yaml@refs/heads/main`\n");
}

TEST_CASE("kernels_default() accepts kernels-community's four workflows and kernels-community-rs's build") {
  const Policy policy = Policy::kernels_default();
  for (const char* workflow : {"build.yaml", "build-mac.yaml", "build-windows.yaml", "sign-old-builds.yaml"}) {
    INFO(workflow);
    CHECK(check_policy(policy, workflow_signer("huggingface/kernels-community", workflow)));
  }
  CHECK(check_policy(policy, workflow_signer("huggingface/kernels-community-rs", "build.yaml")));
}

TEST_CASE("kernels_default() refuses anyone else, naming the field and what it held") {
  const Policy policy = Policy::kernels_default();
  const auto message = mismatch(policy, workflow_signer("evil/kernels-community", "build.yaml"));
  CHECK_THAT(message, Catch::Contains("no alternative of the policy holds: (1) the certificate's source repository URI "
                                      "(1.3.6.1.4.1.57264.1.12) is `https://github.com/evil/kernels-community`; the "
                                      "policy wants `https://github.com/huggingface/kernels-community`; (2)"));
  CHECK_THAT(
      mismatch(policy, workflow_signer("huggingface/kernels-community-rs", "build-mac.yaml")),
      Catch::Contains("the certificate's build signer URI (1.3.6.1.4.1.57264.1.9) is "
                      "`https://github.com/huggingface/kernels-community-rs/.github/workflows/build-mac.yaml@refs/"
                      "heads/main`"));
  CHECK_THAT(mismatch(policy, workflow_signer("huggingface/kernels-community", "build.yaml", "refs/heads/pr")),
             Catch::Contains("build.yaml@refs/heads/pr`; the policy wants one of"));
  Signer gitlab = workflow_signer("huggingface/kernels-community", "build.yaml");
  std::get<CertificateIdentity>(gitlab.identity).issuer_v2 = "https://gitlab.com";
  CHECK_THAT(mismatch(policy, gitlab),
             Catch::Contains("OIDC issuer (V2) (1.3.6.1.4.1.57264.1.8) is `https://gitlab.com`"));
  // sigstore-python's OIDCIssuer and OIDCIssuerV2 both require their extension.
  Signer v1_only = workflow_signer("huggingface/kernels-community", "build.yaml");
  std::get<CertificateIdentity>(v1_only.identity).issuer_v2.reset();
  CHECK_THAT(mismatch(policy, v1_only), Catch::Contains("OIDC issuer (V2) (1.3.6.1.4.1.57264.1.8) is absent"));
  CHECK_THAT(mismatch(policy, Signer{KeyIdentity{"der", "ab12"}}), Catch::Contains("signed with a managed key"));
}

TEST_CASE("an identity rule checks what it sets: the SAN exactly, the issuer in each extension present") {
  Signer signer = workflow_signer("acme/kernels", "release.yaml");
  IdentityRule rule;
  rule.subject_alternative_name = "https://github.com/acme/kernels/.github/workflows/release.yaml@refs/heads/main";
  rule.oidc_issuer = kGithub;
  CHECK(check_policy(rule, signer));
  std::get<CertificateIdentity>(signer.identity).issuer_v2.reset();
  CHECK(check_policy(rule, signer));  // V1 alone, as sigstore-python's Identity reads it
  std::get<CertificateIdentity>(signer.identity).issuer_v1.reset();
  CHECK_THAT(mismatch(rule, signer), Catch::Contains("names no OIDC issuer"));
  rule.subject_alternative_name = "https://github.com/acme/kernels/.github/workflows/release.yaml@refs/heads/dev";
  CHECK_THAT(mismatch(rule, workflow_signer("acme/kernels", "release.yaml")),
             Catch::Contains("subject alternative names are `https://github.com/acme/kernels/.github/workflows/"
                             "release.yaml@refs/heads/main`; the policy wants"));
}

TEST_CASE("a policy that checks nothing is a mistake, not a policy") {
  const Signer signer = workflow_signer("acme/kernels", "release.yaml");
  auto empty_rule = check_policy(IdentityRule{}, signer);
  REQUIRE_FALSE(empty_rule);
  CHECK(empty_rule.error().code == ErrorCode::kInvalidArgument);
  auto empty_any = check_policy(Policy::any_of({}), signer);
  REQUIRE_FALSE(empty_any);
  CHECK(empty_any.error().code == ErrorCode::kInvalidArgument);
}

TEST_CASE("a public-key rule matches the key's fingerprint") {
  const testing::TestInstance instance;
  auto rule = PublicKeyRule::from_pem(instance.managed_public_key_pem());
  REQUIRE(rule);
  auto signer = Signer::from_public_key_pem(instance.managed_public_key_pem());
  REQUIRE(signer);
  CHECK(check_policy(*rule, *signer));
  const testing::TestInstance other;
  CHECK_THAT(mismatch(*rule, *Signer::from_public_key_pem(other.managed_public_key_pem())),
             Catch::Contains("the bundle was signed by the key sha256:"));
  CHECK_THAT(mismatch(*rule, workflow_signer("acme/kernels", "x.yaml")), Catch::Contains("the policy wants the key"));
  CHECK(PublicKeyRule::from_pem("not a key").error().code == ErrorCode::kInvalidArgument);
}

TEST_CASE("a signer rebuilt from a cached certificate re-checks a policy without verifying again") {
  const testing::TestInstance instance;
  (void)instance.bundle();
  auto signer = Signer::from_certificate_der(instance.last_leaf_der());
  REQUIRE(signer);
  CHECK(check_policy(Policy::kernels_default(), *signer));
  // A certificate without the extensions the policy asks for.
  testing::BundleOptions bare;
  bare.leaf.source_repository_uri.reset();
  bare.leaf.build_signer_uri.reset();
  (void)instance.bundle(bare);
  auto bare_signer = Signer::from_certificate_der(instance.last_leaf_der());
  REQUIRE(bare_signer);
  CHECK_THAT(mismatch(Policy::kernels_default(), *bare_signer),
             Catch::Contains("source repository URI (1.3.6.1.4.1.57264.1.12) is absent"));
  CHECK(Signer::from_certificate_der("not DER").error().code == ErrorCode::kCorruptFile);
}

}  // namespace
}  // namespace kernelhub::sigstore
