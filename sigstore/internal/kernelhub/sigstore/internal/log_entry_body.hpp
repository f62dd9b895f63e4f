// The body of a transparency log entry (`canonicalizedBody`) checked against the rest of the bundle,
// so that a genuine entry of one signing cannot vouch for another (CVE-2022-36056's class). Kinds:
//   hashedrekord 0.0.1 (Rekor v1): the artifact digest (hex), the signature, the signer's PEM;
//   hashedrekord 0.0.2 (Rekor v2): the digest (base64), the signature, the signer's DER and key
//     details; for a DSSE envelope the digest is that of PAE(payloadType, payload);
//   dsse 0.0.1 (Rekor v1): the payload's SHA-256 and every envelope signature with the signer;
//   intoto 0.0.2 (Rekor v1): the payload's SHA-256, the one envelope signature (base64 twice) and
//     the signer.
//
// Thread safety: pure functions.
#pragma once

#include <string>

#include "kernelhub/base/result.hpp"
#include "kernelhub/sigstore/bundle.hpp"
#include "kernelhub/sigstore/internal/verification_key.hpp"

namespace kernelhub::sigstore {

// What the entry must record, from the verified bundle.
struct EntryExpectation {
  HashAlgorithm hash = HashAlgorithm::kSha256;
  // The digest the signature is over: the artifact's, or for a DSSE envelope PAE's (hashedrekord
  // 0.0.2 only; the dsse and intoto kinds record the payload's SHA-256).
  std::string digest;
  std::string signature;
  std::string certificate_der;             // the signing certificate; empty for a managed key
  std::string public_key_der;              // the signer's SubjectPublicKeyInfo
  std::string key_details;                 // protobuf-specs PublicKeyDetails of the signer's key
  const DsseEnvelope* envelope = nullptr;  // set for a DSSE bundle
};

// Errors: kCorruptFile (a body that is not JSON of its kind); kBadSignature naming the field that
// differs from the bundle, or an entry kind and version this library does not check.
Status check_log_entry_body(const TransparencyLogEntry& entry, const EntryExpectation& expected);

}  // namespace kernelhub::sigstore
