// An X.509 certificate as Sigstore uses one: a Fulcio signing certificate (its extensions name
// the signer), a CA or TSA certificate of a trusted root. Parsing and the facts a verifier asks
// of a certificate; chain building is chain.hpp's.
//
// Fulcio's extensions (the OIDs under 1.3.6.1.4.1.57264.1): `.1` (OIDC issuer, V1) holds the raw
// string bytes; `.8` (issuer, V2) and the others from `.9` on hold a DER UTF8String.
//
// Thread safety: immutable after parsing; copies share the OpenSSL object.
#pragma once

#include <openssl/x509.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernelhub/base/result.hpp"
#include "kernelhub/sigstore/internal/verification_key.hpp"
#include "kernelhub/sigstore/time.hpp"

namespace kernelhub::sigstore {

namespace oid {
inline constexpr std::string_view kIssuerV1 = "1.3.6.1.4.1.57264.1.1";
inline constexpr std::string_view kIssuerV2 = "1.3.6.1.4.1.57264.1.8";
inline constexpr std::string_view kBuildSignerUri = "1.3.6.1.4.1.57264.1.9";
inline constexpr std::string_view kBuildSignerDigest = "1.3.6.1.4.1.57264.1.10";
inline constexpr std::string_view kSourceRepositoryUri = "1.3.6.1.4.1.57264.1.12";
inline constexpr std::string_view kSourceRepositoryDigest = "1.3.6.1.4.1.57264.1.13";
inline constexpr std::string_view kSourceRepositoryRef = "1.3.6.1.4.1.57264.1.14";
inline constexpr std::string_view kOtherNameSan = "1.3.6.1.4.1.57264.1.7";
inline constexpr std::string_view kEmbeddedScts = "1.3.6.1.4.1.11129.2.4.2";
inline constexpr std::string_view kCtPrecertificateSigning = "1.3.6.1.4.1.11129.2.4.4";
inline constexpr std::string_view kCodeSigning = "1.3.6.1.5.5.7.3.3";
inline constexpr std::string_view kTimeStamping = "1.3.6.1.5.5.7.3.8";
}  // namespace oid

class Certificate {
 public:
  // One DER certificate, nothing after it. Errors: kCorruptFile.
  static Result<Certificate> parse_der(std::string_view der);

  X509* get() const { return x509_.get(); }
  const std::string& der() const { return der_; }
  // Errors: kCorruptFile (a key of a kind verification_key.hpp does not know).
  Result<VerificationKey> public_key() const;
  // The DER SubjectPublicKeyInfo.
  std::string spki_der() const;

  Instant not_before() const { return not_before_; }
  Instant not_after() const { return not_after_; }
  // Whether notBefore <= at <= notAfter (closed, as Sigstore's verifiers compare).
  bool valid_at(Instant at) const { return not_before_ <= at && at <= not_after_; }

  std::string subject() const;  // one line, RFC 2253
  // How to name it to people: `the certificate for <first SAN>` (a Fulcio certificate has no
  // subject), else `the certificate <subject>`.
  std::string description() const;
  std::string issuer() const;
  bool is_ca() const;  // basicConstraints cA
  // Whether its issuer name is its subject and its own key verifies its signature.
  bool is_self_signed() const;
  bool has_digital_signature_usage() const;  // keyUsage digitalSignature
  // Whether its extended key usage lists `purpose` (a dotted OID, oid::kCodeSigning).
  bool has_extended_key_usage(std::string_view purpose) const;
  // The value (the OCTET STRING's contents) of the extension `extension_oid`, if present.
  std::optional<std::string> extension(std::string_view extension_oid) const;
  // The value of a Fulcio V2 extension: its DER UTF8String decoded. nullopt when absent.
  // Errors: kBadSignature when present and not a UTF8String (naming the OID).
  Result<std::optional<std::string>> utf8_extension(std::string_view extension_oid) const;
  // Every URI and email SAN, and the text of Sigstore's otherName SAN (oid::kOtherNameSan).
  std::vector<std::string> subject_alternative_names() const;

  // The DER TBSCertificate with the extension `extension_oid` removed, re-encoded: what a CT log
  // signed for a precertificate (RFC 6962 section 3.2). Errors: kInternal.
  Result<std::string> tbs_without_extension(std::string_view extension_oid) const;

 private:
  std::shared_ptr<X509> x509_;
  std::string der_;
  Instant not_before_{};
  Instant not_after_{};
};

}  // namespace kernelhub::sigstore
