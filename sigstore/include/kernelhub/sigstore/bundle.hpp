// Bundle: a Sigstore bundle (protobuf-specs' `Bundle` message in its JSON form, e.g. a kernel
// variant's `metadata.json.sigstore`, what `cosign sign-blob --bundle` writes): the signature (over
// an artifact, or a DSSE envelope), the material that names the signer (a Fulcio certificate, or
// the hint of a managed key), and the proof that it was logged and when (transparency log
// entries, RFC 3161 timestamps).
//
// Media types read: `application/vnd.dev.sigstore.bundle+json;version=0.1`, `0.2`, `0.3` and
// `application/vnd.dev.sigstore.bundle.v0.3+json`; any other is refused. Parsing checks the shape
// (every field's type, base64 and integers, the version's rules below) and nothing cryptographic:
// verify() (verify.hpp) does that. All byte fields hold raw bytes, already base64-decoded.
//
// Thread safety: a value type.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "kernelhub/base/result.hpp"

namespace kernelhub::sigstore {

enum class BundleVersion { k0_1, k0_2, k0_3 };

// "0.1", "0.2", "0.3".
std::string_view to_string(BundleVersion version);

struct MessageDigest {
  std::string algorithm;  // "SHA2_256", "SHA2_384", "SHA2_512"
  std::string digest;
};

// A signature over the artifact itself (`messageSignature`).
struct MessageSignature {
  std::optional<MessageDigest> message_digest;  // the artifact's digest, as the signer stated it
  std::string signature;
};

struct DsseSignature {
  std::string sig;
  std::string keyid;
};

// A DSSE envelope (`dsseEnvelope`): a signature over PAE(payloadType, payload).
struct DsseEnvelope {
  std::string payload;
  std::string payload_type;  // "application/vnd.in-toto+json" for an in-toto statement
  std::vector<DsseSignature> signatures;
};

struct InclusionProof {
  std::int64_t log_index = 0;  // the entry's index in the tree the proof is for
  std::string root_hash;
  std::int64_t tree_size = 0;
  std::vector<std::string> hashes;
  std::optional<std::string> checkpoint;  // the signed note (`checkpoint.envelope`)
};

struct TransparencyLogEntry {
  std::int64_t log_index = 0;
  std::string log_id;                                 // `logId.keyId`
  std::string kind;                                   // "hashedrekord", "dsse", "intoto"
  std::string version;                                // "0.0.1", "0.0.2"
  std::optional<std::int64_t> integrated_time;        // Rekor v1: seconds since the epoch
  std::optional<std::string> signed_entry_timestamp;  // Rekor v1's inclusion promise
  std::optional<InclusionProof> inclusion_proof;
  std::string canonicalized_body;  // the entry's JSON, as the log hashed it
};

struct Bundle {
  std::string media_type;
  BundleVersion version = BundleVersion::k0_3;
  // The signing certificate first (DER): v0.3's `certificate`, or v0.1/v0.2's
  // `x509CertificateChain`. Empty when a managed key signed.
  std::vector<std::string> certificates;
  // `publicKey.hint` of a bundle a managed key signed (cosign: base64 sha256 of the key's DER).
  std::optional<std::string> public_key_hint;
  std::vector<TransparencyLogEntry> tlog_entries;
  std::vector<std::string> rfc3161_timestamps;  // DER TimeStampResp, each
  std::variant<MessageSignature, DsseEnvelope> content;

  // Parses the JSON form. Shape rules: exactly one of certificate material and public key; v0.1
  // entries carry an inclusion promise; v0.2+ entries carry an inclusion proof with a checkpoint,
  // and an inclusion promise unless the bundle has timestamps; log indexes are not negative.
  // Errors: kCorruptFile naming the field (not JSON, nested too deep, an unknown media type, a
  // missing or mistyped field, base64 that does not decode, a rule above broken).
  static Result<Bundle> parse(std::string_view json);

  // The signature the log entry and timestamps are over: the message signature, or the DSSE
  // envelope's first signature.
  const std::string& signature() const;
  bool has_certificate() const { return !certificates.empty(); }
};

}  // namespace kernelhub::sigstore
