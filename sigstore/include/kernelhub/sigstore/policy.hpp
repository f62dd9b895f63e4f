// Policy: whom a caller trusts to have signed, as a value checked against a verified bundle's
// Signer (signer.hpp). verify() establishes that the signature is genuine; check_policy() that the
// signer is one the caller accepts. Keeping them apart lets a caller cache what verify() returned
// and re-check a (possibly changed) policy later, without the bundle's cryptography.
//
// Rules:
//   - IdentityRule: facts of a Fulcio certificate; every field that is set must hold.
//   - PublicKeyRule: a managed key, by fingerprint.
//   - any_of: at least one of several policies holds.
// Policy::kernels_default() is the `kernels` package's DEFAULT_POLICY (kernels 0.19.1,
// kernels/_internals/verify.py): kernels-community's (or kernels-community-rs's) GitHub Actions
// workflows on main.
//
// Thread safety: value types and pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernelhub/base/result.hpp"
#include "kernelhub/sigstore/signer.hpp"

namespace kernelhub::sigstore {

struct IdentityRule {
  // One of the certificate's SANs, exactly (the conformance protocol's --certificate-identity).
  std::optional<std::string> subject_alternative_name;
  // The OIDC issuer: each issuer extension the certificate has (V1 .1.1, V2 .1.8) must equal it,
  // and it must have at least one.
  std::optional<std::string> oidc_issuer;
  // Both issuer extensions must be present (and equal oidc_issuer), as sigstore-python's
  // OIDCIssuer and OIDCIssuerV2 policies together demand (the kernels package uses both).
  bool require_both_issuer_extensions = false;
  std::optional<std::string> source_repository_uri;  // .1.12, exactly
  std::vector<std::string> build_signer_uris;        // .1.9 equals one of them (empty: not checked)

  // Whether the rule checks anything at all (an empty rule would accept any certificate, and
  // check_policy refuses it).
  bool checks_something() const;
};

struct PublicKeyRule {
  std::string fingerprint;  // sha256 of the key's DER SubjectPublicKeyInfo, lower-case hex

  // Errors: kInvalidArgument (not a PEM public key).
  static Result<PublicKeyRule> from_pem(std::string_view pem);
};

class Policy {
 public:
  enum class Kind { kIdentity, kPublicKey, kAnyOf };

  Policy(IdentityRule rule);   // NOLINT(google-explicit-constructor): a rule is a policy
  Policy(PublicKeyRule rule);  // NOLINT(google-explicit-constructor)
  static Policy any_of(std::vector<Policy> alternatives);
  // kernels 0.19.1's DEFAULT_POLICY, rule for rule.
  static Policy kernels_default();

  Kind kind() const { return kind_; }
  const IdentityRule& identity() const { return identity_; }                 // REQUIRES: kind() == kIdentity
  const PublicKeyRule& public_key() const { return public_key_; }            // REQUIRES: kind() == kPublicKey
  const std::vector<Policy>& alternatives() const { return alternatives_; }  // REQUIRES: kAnyOf

  // One line per rule, indented by nesting.
  std::string describe() const;

 private:
  Kind kind_;
  IdentityRule identity_;
  PublicKeyRule public_key_;
  std::vector<Policy> alternatives_;
};

// Whether `signer` satisfies `policy`. Errors: kUntrustedPublisher naming the field that differed,
// what the certificate (or key) held and what the policy wants (for any_of, every alternative's
// reason); kInvalidArgument for a policy that checks nothing (an empty IdentityRule or any_of).
// A signature that verifies but whose signer the caller does not trust is kUntrustedPublisher,
// not kBadSignature: the bundle is genuine, its publisher is not one the caller accepts.
Status check_policy(const Policy& policy, const Signer& signer);

}  // namespace kernelhub::sigstore
