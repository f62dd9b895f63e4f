#include "kernelhub/sigstore/verify.hpp"

#include <algorithm>
#include <set>

#include "kernelhub/base/internal/hex.hpp"
#include "kernelhub/sigstore/internal/certificate.hpp"
#include "kernelhub/sigstore/internal/chain.hpp"
#include "kernelhub/sigstore/internal/checkpoint.hpp"
#include "kernelhub/sigstore/internal/dsse.hpp"
#include "kernelhub/sigstore/internal/inclusion_proof.hpp"
#include "kernelhub/sigstore/internal/log_entry_body.hpp"
#include "kernelhub/sigstore/internal/openssl_handles.hpp"
#include "kernelhub/sigstore/internal/sct.hpp"
#include "kernelhub/sigstore/internal/signed_entry_timestamp.hpp"
#include "kernelhub/sigstore/internal/signer_of.hpp"
#include "kernelhub/sigstore/internal/timestamp.hpp"
#include "kernelhub/sigstore/internal/trusted_material.hpp"

namespace kernelhub::sigstore {

namespace {

// At most this many RFC 3161 timestamps are read (sigstore-go's and sigstore-python's bound).
constexpr std::size_t kMaxTimestamps = 32;

Error refuse(std::string what) {
  return Error{ErrorCode::kBadSignature, std::move(what)};
}

// Who signed: the certificate (and its key) or the managed key.
struct SignerMaterial {
  std::optional<Certificate> certificate;
  VerificationKey key;
};

Result<SignerMaterial> signer_material(const Bundle& bundle, const VerifyOptions& options) {
  if (options.public_key_pem) {
    if (bundle.has_certificate()) {
      return unexpected(
          refuse("a managed key was given, and the bundle carries a signing certificate: a bundle "
                 "signed through Fulcio is verified against an identity, not a key"));
    }
    KH_ASSIGN_OR_RETURN(auto key, VerificationKey::from_pem(*options.public_key_pem));
    return SignerMaterial{std::nullopt, std::move(key)};
  }
  if (!bundle.has_certificate()) {
    return unexpected(refuse("the bundle was signed with a managed key (hint `" + bundle.public_key_hint.value_or("") +
                             "`) and no key was given to verify it with"));
  }
  auto leaf = Certificate::parse_der(bundle.certificates.front());
  if (!leaf) return unexpected(ErrorCode::kCorruptFile, "the bundle's signing certificate is " + leaf.error().message);
  for (std::size_t i = 1; i < bundle.certificates.size(); ++i) {
    auto other = Certificate::parse_der(bundle.certificates[i]);
    if (!other) {
      return unexpected(ErrorCode::kCorruptFile,
                        "certificate " + std::to_string(i + 1) + " of the bundle's chain is " + other.error().message);
    }
    // protobuf-specs: the chain MUST NOT carry a root; one that does could anchor itself.
    if (other->is_ca() && other->is_self_signed()) {
      return unexpected(refuse("the bundle's certificate chain carries a root certificate (`" + other->subject() +
                               "`): trust comes from the trusted root, never from the bundle"));
    }
  }
  if (leaf->is_ca()) return unexpected(refuse("the bundle's signing certificate is a CA certificate, not a leaf"));
  auto key = leaf->public_key();
  if (!key) return unexpected(refuse("the signing certificate's key is " + key.error().message));
  return SignerMaterial{std::move(*leaf), std::move(*key)};
}

// Step 1: a path to a CA of the root at every verified time. Returns the path of the last.
Result<std::vector<Certificate>> certificate_path(const Certificate& leaf, const TrustedMaterial& material,
                                                  const std::vector<VerifiedTime>& times) {
  std::vector<Certificate> path;
  for (const auto& time : times) {
    std::string reasons;
    bool found = false;
    for (const auto& authority : material.certificate_authorities) {
      const auto& instance = authority.instance;
      if (!instance.valid_for.contains(time.time)) {
        reasons += "; `" + instance.uri + "` is trusted " + instance.valid_for.to_string();
        continue;
      }
      auto verified = verify_chain(leaf, authority.certificates, time.time);
      if (verified) {
        path = std::move(*verified);
        found = true;
        break;
      }
      reasons += "; `" + instance.uri + "`: " + verified.error().message;
    }
    if (!found) {
      return unexpected(refuse("the signing certificate cannot be verified at " + to_rfc3339(time.time) +
                               " against a certificate authority of the trusted root" +
                               (reasons.empty() ? ": the root lists none" : reasons)));
    }
  }
  return path;
}

// Step 0: the verified times.
Result<std::vector<VerifiedTime>> verified_times(const Bundle& bundle, const TrustedMaterial& material,
                                                 const TransparencyLogEntry* entry, const LogKey* log) {
  std::vector<VerifiedTime> times;
  const auto& timestamps = bundle.rfc3161_timestamps;
  if (timestamps.size() > kMaxTimestamps) {
    return unexpected(refuse("the bundle carries " + std::to_string(timestamps.size()) +
                             " RFC 3161 timestamps; at most " + std::to_string(kMaxTimestamps) + " are read"));
  }
  if (std::set<std::string>(timestamps.begin(), timestamps.end()).size() != timestamps.size()) {
    return unexpected(refuse("the bundle carries the same RFC 3161 timestamp twice"));
  }
  for (const auto& timestamp : timestamps) {
    KH_ASSIGN_OR_RETURN(auto verified, verify_timestamp(timestamp, bundle.signature(), material.timestamp_authorities));
    times.push_back(VerifiedTime{TimeSource::kTimestampAuthority, verified.time, verified.authority});
  }
  if (entry != nullptr && entry->signed_entry_timestamp) {
    if (!entry->integrated_time) {
      return unexpected(refuse("the log entry has an inclusion promise and no integrated time for it to promise"));
    }
    KH_RETURN_IF_ERROR(verify_signed_entry_timestamp(*entry, *log));
    times.push_back(VerifiedTime{TimeSource::kTransparencyLog, Instant{std::chrono::seconds{*entry->integrated_time}},
                                 log->instance.base_url});
  }
  return times;
}

// Step 4: the inclusion proof and its checkpoint.
Status check_inclusion(const TransparencyLogEntry& entry, const LogKey& log) {
  const auto& proof = *entry.inclusion_proof;
  KH_RETURN_IF_ERROR(verify_inclusion(merkle_leaf_hash(entry.canonicalized_body), proof.log_index, proof.tree_size,
                                      proof.hashes, proof.root_hash));
  KH_ASSIGN_OR_RETURN(auto checkpoint, parse_checkpoint(*proof.checkpoint));
  return verify_checkpoint(checkpoint, log, proof.tree_size, proof.root_hash);
}

std::optional<HashAlgorithm> hash_named(std::string_view name) {
  if (name == "SHA2_256") return HashAlgorithm::kSha256;
  if (name == "SHA2_384") return HashAlgorithm::kSha384;
  if (name == "SHA2_512") return HashAlgorithm::kSha512;
  return std::nullopt;
}

std::string signer_words(const SignerMaterial& signer) {
  return signer.certificate ? "the signing certificate's key" : "the managed key sha256:" + signer.key.fingerprint();
}

// Step 6 for a message signature; fills what the log entry must record.
Status check_message_signature(const MessageSignature& message, const Artifact& artifact, const SignerMaterial& signer,
                               EntryExpectation& expected) {
  const VerificationKey& key = signer.key;
  HashAlgorithm hash = key.kind() == VerificationKey::Kind::kEd25519 ? HashAlgorithm::kSha512 : key.default_hash();
  if (message.message_digest) {
    const auto named = hash_named(message.message_digest->algorithm);
    if (!named) {
      return unexpected(refuse("the bundle's message digest is `" + message.message_digest->algorithm +
                               "`, not SHA2_256, SHA2_384 or SHA2_512"));
    }
    if (key.kind() != VerificationKey::Kind::kEd25519) hash = *named;
  }
  std::string artifact_digest;
  if (artifact.has_bytes()) {
    artifact_digest = digest(hash, artifact.data());
  } else if (hash == HashAlgorithm::kSha256) {
    artifact_digest.assign(artifact.sha256_digest().begin(), artifact.sha256_digest().end());
  } else {
    return unexpected(refuse("the signature is over the artifact's " + std::string(protobuf_name(hash)) +
                             ": its bytes are needed, not its SHA-256"));
  }
  if (message.message_digest && hash_named(message.message_digest->algorithm) == hash &&
      message.message_digest->digest != artifact_digest) {
    return unexpected(refuse("the bundle signs an artifact whose " + std::string(protobuf_name(hash)) + " is " +
                             to_hex(message.message_digest->digest) + "; the artifact given has " +
                             to_hex(artifact_digest)));
  }
  bool verified;
  if (key.kind() == VerificationKey::Kind::kEd25519) {
    if (!artifact.has_bytes()) {
      return unexpected(refuse("an Ed25519 signature is over the artifact's bytes, and only its digest was given"));
    }
    verified = key.verify_message(artifact.data(), message.signature, hash);
  } else {
    verified = key.verify_digest(artifact_digest, message.signature, hash);
  }
  if (!verified) {
    return unexpected(refuse("the signature does not verify over the artifact (" + std::string(protobuf_name(hash)) +
                             " " + to_hex(artifact_digest) + ") with " + signer_words(signer)));
  }
  expected.hash = hash;
  expected.digest = std::move(artifact_digest);
  expected.signature = message.signature;
  return {};
}

// Step 6 for a DSSE envelope, and step 7's artifact check; fills what the log entry must record.
Status check_envelope(const DsseEnvelope& envelope, const Artifact& artifact, const SignerMaterial& signer,
                      EntryExpectation& expected) {
  if (envelope.signatures.size() != 1) {
    return unexpected(refuse("the DSSE envelope carries " + std::to_string(envelope.signatures.size()) +
                             " signatures; exactly one is read"));
  }
  const VerificationKey& key = signer.key;
  const HashAlgorithm hash = key.default_hash();
  const std::string pae = pre_authentication_encoding(envelope.payload_type, envelope.payload);
  if (!key.verify_message(pae, envelope.signatures[0].sig, hash)) {
    return unexpected(refuse("the DSSE envelope's signature does not verify with " + signer_words(signer)));
  }
  const std::string wanted = artifact.sha256_hex();
  if (envelope.payload_type == kInTotoPayloadType) {
    auto subjects = in_toto_subjects(envelope.payload);
    if (!subjects) return unexpected(refuse("the DSSE envelope's payload: " + subjects.error().message));
    std::string listed;
    for (const auto& subject : *subjects) {
      if (subject.sha256 == wanted) {
        listed.clear();
        break;
      }
      listed += (listed.empty() ? "" : ", ") + subject.name + " sha256:" + subject.sha256;
    }
    if (!listed.empty()) {
      return unexpected(refuse("the artifact (sha256:" + wanted +
                               ") is not a subject of the in-toto statement the "
                               "bundle signs (" +
                               listed + ")"));
    }
  } else if (to_hex(digest(HashAlgorithm::kSha256, envelope.payload)) != wanted) {
    return unexpected(refuse("the DSSE envelope signs a `" + envelope.payload_type +
                             "` payload that is not the artifact (sha256:" + wanted + ")"));
  }
  expected.hash = hash;
  expected.digest = digest(hash, pae);
  expected.signature = envelope.signatures[0].sig;
  expected.envelope = &envelope;
  return {};
}

}  // namespace

Result<VerifiedBundle> verify(const Bundle& bundle, const Artifact& artifact, const TrustedRoot& root,
                              const VerifyOptions& options) {
  const ClearOpensslErrorsOnExit clear_errors;
  const TrustedMaterial& material = trusted_material(root);
  if (const auto* envelope = std::get_if<DsseEnvelope>(&bundle.content); envelope && envelope->signatures.empty()) {
    return unexpected(refuse("the bundle's DSSE envelope carries no signature"));
  }
  KH_ASSIGN_OR_RETURN(const SignerMaterial signer, signer_material(bundle, options));

  const TransparencyLogEntry* entry = nullptr;
  const LogKey* log = nullptr;
  if (bundle.tlog_entries.size() > 1) {
    return unexpected(refuse("the bundle carries " + std::to_string(bundle.tlog_entries.size()) +
                             " transparency log entries; exactly one is read"));
  }
  if (bundle.tlog_entries.empty()) {
    if (signer.certificate || !options.allow_no_tlog_for_keys) {
      return unexpected(
          refuse("the bundle has no transparency log entry: nothing shows its signing was published" +
                 std::string(signer.certificate ? "" : " (a keyed bundle without one needs allow_no_tlog_for_keys)")));
    }
  } else {
    entry = &bundle.tlog_entries.front();
    log = find_log(material.transparency_logs, entry->log_id);
    if (log == nullptr) {
      return unexpected(refuse("the bundle's log entry is from the log " + to_hex(entry->log_id) +
                               ", which the trusted root (" + material.source +
                               ") does not list: a bundle of another Sigstore instance?"));
    }
  }

  KH_ASSIGN_OR_RETURN(auto times, verified_times(bundle, material, entry, log));
  if (times.empty() && entry != nullptr) {
    return unexpected(
        refuse("nothing in the bundle says when it was signed: its log entry has no inclusion "
               "promise and it carries no RFC 3161 timestamp"));
  }

  if (signer.certificate) {
    const Certificate& leaf = *signer.certificate;
    KH_ASSIGN_OR_RETURN(auto path, certificate_path(leaf, material, times));
    KH_RETURN_IF_ERROR(verify_embedded_scts(leaf, path, material.ct_logs));
    if (!leaf.has_digital_signature_usage()) {
      return unexpected(refuse("the signing certificate's key usage does not include digitalSignature"));
    }
    if (!leaf.has_extended_key_usage(oid::kCodeSigning)) {
      return unexpected(refuse("the signing certificate's extended key usage does not include codeSigning"));
    }
  }

  if (entry != nullptr) {
    // A version 0.1 bundle may carry a proof without a checkpoint: its root hash is then no one's
    // word, and the proof proves nothing (the inclusion promise stands for it).
    if (entry->inclusion_proof && entry->inclusion_proof->checkpoint) KH_RETURN_IF_ERROR(check_inclusion(*entry, *log));
    for (const auto& time : times) {
      if (!log->instance.valid_for.contains(time.time)) {
        return unexpected(refuse("the log `" + log->instance.base_url + "` is trusted " +
                                 log->instance.valid_for.to_string() + ", not at " + to_rfc3339(time.time)));
      }
    }
  }

  EntryExpectation expected;
  if (const auto* message = std::get_if<MessageSignature>(&bundle.content)) {
    KH_RETURN_IF_ERROR(check_message_signature(*message, artifact, signer, expected));
  } else {
    KH_RETURN_IF_ERROR(check_envelope(std::get<DsseEnvelope>(bundle.content), artifact, signer, expected));
  }
  if (entry != nullptr) {
    expected.certificate_der = signer.certificate ? signer.certificate->der() : std::string();
    expected.public_key_der = signer.key.spki_der();
    expected.key_details = signer.key.key_details();
    KH_RETURN_IF_ERROR(check_log_entry_body(*entry, expected));
  }

  VerifiedBundle out;
  if (signer.certificate) {
    KH_ASSIGN_OR_RETURN(out.signer, signer_of(*signer.certificate));
  } else {
    out.signer = signer_of(signer.key);
  }
  out.times = std::move(times);
  if (entry != nullptr) {
    out.log_entry = VerifiedLogEntry{log->instance.base_url, entry->log_index, entry->kind, entry->version};
  }
  out.version = bundle.version;
  return out;
}

}  // namespace kernelhub::sigstore
