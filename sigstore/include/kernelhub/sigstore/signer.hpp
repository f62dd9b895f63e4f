// Signer: who signed a verified bundle, as a policy (policy.hpp) checks it: the identity a Fulcio
// certificate states, or the fingerprint of a managed key. A Signer is plain data: a caller can
// keep it (or only the certificate's DER, and rebuild it with from_certificate_der) beside the
// bundle it verified and check another policy later without verifying again, as the kernels
// package re-checks its policy against a cached receipt.
//
// Thread safety: value types.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "kernelhub/base/result.hpp"

namespace kernelhub::sigstore {

// What a Fulcio certificate says of its subject (the extensions under 1.3.6.1.4.1.57264.1).
struct CertificateIdentity {
  // Every URI and email SAN, and Sigstore's otherName SAN (for GitHub Actions: the workflow URI,
  // `https://github.com/ORG/REPO/.github/workflows/FILE@REF`).
  std::vector<std::string> subject_alternative_names;
  std::optional<std::string> issuer_v1;                 // .1.1, raw bytes: the OIDC issuer
  std::optional<std::string> issuer_v2;                 // .1.8, DER UTF8String: the same issuer
  std::optional<std::string> build_signer_uri;          // .1.9
  std::optional<std::string> build_signer_digest;       // .1.10
  std::optional<std::string> source_repository_uri;     // .1.12
  std::optional<std::string> source_repository_digest;  // .1.13 (the commit)
  std::optional<std::string> source_repository_ref;     // .1.14
  std::string certificate_der;                          // the signing certificate itself
};

// A managed key (`cosign sign-blob --key`).
struct KeyIdentity {
  std::string public_key_der;  // DER SubjectPublicKeyInfo
  std::string fingerprint;     // sha256 of public_key_der, lower-case hex
};

struct Signer {
  std::variant<CertificateIdentity, KeyIdentity> identity;

  bool is_certificate() const { return std::holds_alternative<CertificateIdentity>(identity); }
  // "certificate for https://github.com/..." or "key sha256:ab12...".
  std::string describe() const;

  // The identity of a certificate (DER), read again: no chain, time or signature is checked, so
  // only use it for a certificate a verify() accepted. Errors: kCorruptFile (not DER X.509),
  // kBadSignature (a Fulcio extension that is not a DER UTF8String).
  static Result<Signer> from_certificate_der(std::string_view der);
  // A managed key's identity from its PEM. Errors: kInvalidArgument.
  static Result<Signer> from_public_key_pem(std::string_view pem);
};

}  // namespace kernelhub::sigstore
