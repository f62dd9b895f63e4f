#include "kernelhub/sigstore/policy.hpp"

#include <algorithm>

#include "kernelhub/sigstore/internal/openssl_handles.hpp"
#include "kernelhub/sigstore/internal/verification_key.hpp"

namespace kernelhub::sigstore {

namespace {

constexpr std::string_view kGithubActionsIssuer = "https://token.actions.githubusercontent.com";

Policy github_workflow(std::string_view repo_id, const std::vector<std::string_view>& workflows) {
  IdentityRule rule;
  rule.oidc_issuer = std::string(kGithubActionsIssuer);
  rule.require_both_issuer_extensions = true;
  rule.source_repository_uri = "https://github.com/" + std::string(repo_id);
  for (const auto workflow : workflows) {
    rule.build_signer_uris.push_back("https://github.com/" + std::string(repo_id) + "/.github/workflows/" +
                                     std::string(workflow) + "@refs/heads/main");
  }
  return rule;
}

std::string quoted(const std::optional<std::string>& value) {
  return value ? "`" + *value + "`" : std::string("absent");
}

Error mismatch(std::string what) {
  return Error{ErrorCode::kUntrustedPublisher, std::move(what)};
}

Status check_field(std::string_view name, std::string_view extension_oid, const std::optional<std::string>& found,
                   const std::string& wanted) {
  if (found == wanted) return {};
  return unexpected(mismatch("the certificate's " + std::string(name) + " (" + std::string(extension_oid) + ") is " +
                             quoted(found) + "; the policy wants `" + wanted + "`"));
}

Status check_identity(const IdentityRule& rule, const CertificateIdentity& identity) {
  if (rule.subject_alternative_name) {
    const auto& sans = identity.subject_alternative_names;
    if (std::find(sans.begin(), sans.end(), *rule.subject_alternative_name) == sans.end()) {
      std::string found;
      for (const auto& san : sans) found += (found.empty() ? "`" : ", `") + san + "`";
      return unexpected(mismatch("the certificate's subject alternative names are " +
                                 (found.empty() ? std::string("none") : found) + "; the policy wants `" +
                                 *rule.subject_alternative_name + "`"));
    }
  }
  if (rule.oidc_issuer) {
    if (rule.require_both_issuer_extensions || identity.issuer_v1) {
      KH_RETURN_IF_ERROR(check_field("OIDC issuer", "1.3.6.1.4.1.57264.1.1", identity.issuer_v1, *rule.oidc_issuer));
    }
    if (rule.require_both_issuer_extensions || identity.issuer_v2) {
      KH_RETURN_IF_ERROR(
          check_field("OIDC issuer (V2)", "1.3.6.1.4.1.57264.1.8", identity.issuer_v2, *rule.oidc_issuer));
    }
    if (!identity.issuer_v1 && !identity.issuer_v2) {
      return unexpected(
          mismatch("the certificate names no OIDC issuer (neither 1.3.6.1.4.1.57264.1.1 nor .1.8); "
                   "the policy wants `" +
                   *rule.oidc_issuer + "`"));
    }
  }
  if (rule.source_repository_uri) {
    KH_RETURN_IF_ERROR(check_field("source repository URI", "1.3.6.1.4.1.57264.1.12", identity.source_repository_uri,
                                   *rule.source_repository_uri));
  }
  if (!rule.build_signer_uris.empty()) {
    const auto& found = identity.build_signer_uri;
    if (!found || std::find(rule.build_signer_uris.begin(), rule.build_signer_uris.end(), *found) ==
                      rule.build_signer_uris.end()) {
      std::string wanted;
      for (const auto& uri : rule.build_signer_uris) wanted += (wanted.empty() ? "`" : ", `") + uri + "`";
      return unexpected(mismatch("the certificate's build signer URI (1.3.6.1.4.1.57264.1.9) is " + quoted(found) +
                                 "; the policy wants one of " + wanted));
    }
  }
  return {};
}

void describe_into(const Policy& policy, int depth, std::string& out) {
  const std::string indent(static_cast<std::size_t>(2 * depth), ' ');
  switch (policy.kind()) {
    case Policy::Kind::kPublicKey: out += indent + "key sha256:" + policy.public_key().fingerprint + "\n"; return;
    case Policy::Kind::kAnyOf:
      out += indent + "any of:\n";
      for (const auto& alternative : policy.alternatives()) describe_into(alternative, depth + 1, out);
      return;
    case Policy::Kind::kIdentity: {
      const auto& rule = policy.identity();
      std::string line;
      const auto add = [&](std::string part) { line += (line.empty() ? "" : ", ") + part; };
      if (rule.subject_alternative_name) add("SAN `" + *rule.subject_alternative_name + "`");
      if (rule.oidc_issuer) {
        add("issuer `" + *rule.oidc_issuer + "`" + (rule.require_both_issuer_extensions ? " (V1 and V2)" : ""));
      }
      if (rule.source_repository_uri) add("source repository `" + *rule.source_repository_uri + "`");
      if (!rule.build_signer_uris.empty()) {
        std::string uris;
        for (const auto& uri : rule.build_signer_uris) uris += (uris.empty() ? "`" : ", `") + uri + "`";
        add("build signer one of " + uris);
      }
      out += indent + "certificate with " + (line.empty() ? std::string("(nothing checked)") : line) + "\n";
      return;
    }
  }
}

}  // namespace

bool IdentityRule::checks_something() const {
  return subject_alternative_name || oidc_issuer || source_repository_uri || !build_signer_uris.empty();
}

Result<PublicKeyRule> PublicKeyRule::from_pem(std::string_view pem) {
  const ClearOpensslErrorsOnExit clear_errors;
  KH_ASSIGN_OR_RETURN(auto key, VerificationKey::from_pem(pem));
  return PublicKeyRule{key.fingerprint()};
}

Policy::Policy(IdentityRule rule) : kind_(Kind::kIdentity), identity_(std::move(rule)) {}
Policy::Policy(PublicKeyRule rule) : kind_(Kind::kPublicKey), public_key_(std::move(rule)) {}

Policy Policy::any_of(std::vector<Policy> alternatives) {
  Policy out{IdentityRule{}};
  out.kind_ = Kind::kAnyOf;
  out.alternatives_ = std::move(alternatives);
  return out;
}

Policy Policy::kernels_default() {
  return any_of({
      github_workflow("huggingface/kernels-community",
                      {"build.yaml", "build-mac.yaml", "build-windows.yaml", "sign-old-builds.yaml"}),
      github_workflow("huggingface/kernels-community-rs", {"build.yaml"}),
  });
}

std::string Policy::describe() const {
  std::string out;
  describe_into(*this, 0, out);
  return out;
}

Status check_policy(const Policy& policy, const Signer& signer) {
  switch (policy.kind()) {
    case Policy::Kind::kIdentity: {
      if (!policy.identity().checks_something()) {
        return unexpected(ErrorCode::kInvalidArgument, "an identity rule that checks nothing would accept anyone");
      }
      const auto* identity = std::get_if<CertificateIdentity>(&signer.identity);
      if (identity == nullptr) {
        return unexpected(mismatch("the bundle was signed with a managed key (" + signer.describe() +
                                   "); the policy wants a certificate identity"));
      }
      return check_identity(policy.identity(), *identity);
    }
    case Policy::Kind::kPublicKey: {
      const auto* key = std::get_if<KeyIdentity>(&signer.identity);
      if (key == nullptr) {
        return unexpected(mismatch("the bundle was signed by a " + signer.describe() +
                                   "; the policy wants the key sha256:" + policy.public_key().fingerprint));
      }
      if (key->fingerprint != policy.public_key().fingerprint) {
        return unexpected(mismatch("the bundle was signed by the key sha256:" + key->fingerprint +
                                   "; the policy wants the key sha256:" + policy.public_key().fingerprint));
      }
      return {};
    }
    case Policy::Kind::kAnyOf: {
      if (policy.alternatives().empty()) {
        return unexpected(ErrorCode::kInvalidArgument, "a policy of no alternatives accepts nobody");
      }
      std::string reasons;
      for (std::size_t i = 0; i < policy.alternatives().size(); ++i) {
        auto held = check_policy(policy.alternatives()[i], signer);
        if (held) return {};
        if (held.error().code == ErrorCode::kInvalidArgument) return held;
        reasons += (i == 0 ? "" : "; ") + std::string("(") + std::to_string(i + 1) + ") " + held.error().message;
      }
      return unexpected(mismatch("no alternative of the policy holds: " + reasons));
    }
  }
  return unexpected(ErrorCode::kInternal, "unknown policy kind");
}

}  // namespace kernelhub::sigstore
