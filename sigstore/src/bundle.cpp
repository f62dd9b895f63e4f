#include "kernelhub/sigstore/bundle.hpp"

#include <nlohmann/json.hpp>

#include "kernelhub/sigstore/internal/protobuf_json.hpp"

namespace kernelhub::sigstore {

namespace {

namespace pj = protobuf_json;
using nlohmann::json;

constexpr std::string_view kRoot = "bundle";

std::optional<BundleVersion> version_of(std::string_view media_type) {
  if (media_type == "application/vnd.dev.sigstore.bundle+json;version=0.1") return BundleVersion::k0_1;
  if (media_type == "application/vnd.dev.sigstore.bundle+json;version=0.2") return BundleVersion::k0_2;
  if (media_type == "application/vnd.dev.sigstore.bundle+json;version=0.3" ||
      media_type == "application/vnd.dev.sigstore.bundle.v0.3+json") {
    return BundleVersion::k0_3;
  }
  return std::nullopt;
}

Result<std::string> raw_bytes(const pj::Field& f) {
  KH_ASSIGN_OR_RETURN(const json* object, pj::object(f));
  return pj::bytes(pj::field(*object, f.path, "rawBytes"));
}

Status signing_material(const json& material, const std::string& path, Bundle& out) {
  const auto certificate_field = pj::field(material, path, "certificate");
  const auto chain_field = pj::field(material, path, "x509CertificateChain");
  const auto key_field = pj::field(material, path, "publicKey");
  const int kinds =
      (certificate_field.value != nullptr) + (chain_field.value != nullptr) + (key_field.value != nullptr);
  if (kinds != 1) {
    return unexpected(pj::corrupt(path,
                                  "must hold exactly one of `certificate`, `x509CertificateChain` and "
                                  "`publicKey`, not " +
                                      std::to_string(kinds)));
  }
  if (key_field.value != nullptr) {
    KH_ASSIGN_OR_RETURN(const json* key, pj::object(key_field));
    KH_ASSIGN_OR_RETURN(auto hint, pj::optional_string(pj::field(*key, key_field.path, "hint")));
    out.public_key_hint = hint.value_or("");
    return {};
  }
  if (certificate_field.value != nullptr) {
    if (out.version != BundleVersion::k0_3) {
      return unexpected(pj::corrupt(certificate_field.path, "appeared in bundle version 0.3; a version " +
                                                                std::string(to_string(out.version)) +
                                                                " bundle carries `x509CertificateChain`"));
    }
    KH_ASSIGN_OR_RETURN(auto der, raw_bytes(certificate_field));
    out.certificates.push_back(std::move(der));
    return {};
  }
  if (out.version == BundleVersion::k0_3) {
    return unexpected(pj::corrupt(chain_field.path,
                                  "is not read in a version 0.3 bundle, which carries the "
                                  "signing `certificate` alone"));
  }
  KH_ASSIGN_OR_RETURN(const json* chain, pj::object(chain_field));
  const auto list_field = pj::field(*chain, chain_field.path, "certificates");
  KH_ASSIGN_OR_RETURN(const json* list, pj::nonempty_array(list_field, "the bundle names no signing certificate"));
  for (std::size_t i = 0; i < list->size(); ++i) {
    KH_ASSIGN_OR_RETURN(auto der, raw_bytes(pj::element(*list, list_field.path, i)));
    out.certificates.push_back(std::move(der));
  }
  return {};
}

Result<InclusionProof> inclusion_proof(const json& proof, const std::string& path) {
  InclusionProof out;
  const auto index_field = pj::field(proof, path, "logIndex");
  KH_ASSIGN_OR_RETURN(out.log_index, pj::int64(index_field));
  if (out.log_index < 0) return unexpected(pj::corrupt(index_field.path, "is negative"));
  KH_ASSIGN_OR_RETURN(out.root_hash, pj::bytes(pj::field(proof, path, "rootHash")));
  const auto size_field = pj::field(proof, path, "treeSize");
  KH_ASSIGN_OR_RETURN(out.tree_size, pj::int64(size_field));
  if (out.tree_size < 1) return unexpected(pj::corrupt(size_field.path, "is not positive"));
  const auto hashes_field = pj::field(proof, path, "hashes");
  KH_ASSIGN_OR_RETURN(const json* hashes, pj::optional_array(hashes_field));
  if (hashes != nullptr) {
    for (std::size_t i = 0; i < hashes->size(); ++i) {
      KH_ASSIGN_OR_RETURN(auto hash, pj::bytes(pj::element(*hashes, hashes_field.path, i)));
      out.hashes.push_back(std::move(hash));
    }
  }
  const auto checkpoint_field = pj::field(proof, path, "checkpoint");
  KH_ASSIGN_OR_RETURN(const json* checkpoint, pj::optional_object(checkpoint_field));
  if (checkpoint != nullptr) {
    KH_ASSIGN_OR_RETURN(auto envelope, pj::string(pj::field(*checkpoint, checkpoint_field.path, "envelope")));
    out.checkpoint = std::move(envelope);
  }
  return out;
}

Result<TransparencyLogEntry> tlog_entry(const pj::Field& f, BundleVersion version, bool has_timestamps) {
  KH_ASSIGN_OR_RETURN(const json* entry, pj::object(f));
  TransparencyLogEntry out;
  const auto index_field = pj::field(*entry, f.path, "logIndex");
  KH_ASSIGN_OR_RETURN(out.log_index, pj::int64(index_field));
  if (out.log_index < 0) {
    return unexpected(
        pj::corrupt(index_field.path, "is " + std::to_string(out.log_index) + ": a log index is never negative"));
  }
  const auto id_field = pj::field(*entry, f.path, "logId");
  KH_ASSIGN_OR_RETURN(const json* id, pj::object(id_field));
  KH_ASSIGN_OR_RETURN(out.log_id, pj::bytes(pj::field(*id, id_field.path, "keyId")));
  const auto kind_field = pj::field(*entry, f.path, "kindVersion");
  KH_ASSIGN_OR_RETURN(const json* kind, pj::object(kind_field));
  KH_ASSIGN_OR_RETURN(out.kind, pj::string(pj::field(*kind, kind_field.path, "kind")));
  KH_ASSIGN_OR_RETURN(out.version, pj::string(pj::field(*kind, kind_field.path, "version")));
  const auto time_field = pj::field(*entry, f.path, "integratedTime");
  KH_ASSIGN_OR_RETURN(out.integrated_time, pj::optional_int64(time_field));
  // protobuf's JSON leaves a zero integer out: an integrated time of 0 is no integrated time.
  if (out.integrated_time == 0) out.integrated_time.reset();
  if (out.integrated_time && *out.integrated_time < 0) return unexpected(pj::corrupt(time_field.path, "is negative"));
  const auto promise_field = pj::field(*entry, f.path, "inclusionPromise");
  KH_ASSIGN_OR_RETURN(const json* promise, pj::optional_object(promise_field));
  if (promise != nullptr) {
    KH_ASSIGN_OR_RETURN(auto set, pj::bytes(pj::field(*promise, promise_field.path, "signedEntryTimestamp")));
    out.signed_entry_timestamp = std::move(set);
  }
  const auto proof_field = pj::field(*entry, f.path, "inclusionProof");
  KH_ASSIGN_OR_RETURN(const json* proof, pj::optional_object(proof_field));
  if (proof != nullptr) {
    KH_ASSIGN_OR_RETURN(auto parsed, inclusion_proof(*proof, proof_field.path));
    out.inclusion_proof = std::move(parsed);
  }
  KH_ASSIGN_OR_RETURN(out.canonicalized_body, pj::bytes(pj::field(*entry, f.path, "canonicalizedBody")));

  // The version's rules (protobuf-specs' sigstore_bundle.proto).
  if (version == BundleVersion::k0_1) {
    if (!out.signed_entry_timestamp) {
      return unexpected(pj::corrupt(f.path, "has no `inclusionPromise`, which a version 0.1 bundle must carry"));
    }
  } else {
    if (!out.inclusion_proof || !out.inclusion_proof->checkpoint) {
      return unexpected(pj::corrupt(f.path, "has no `inclusionProof` with a `checkpoint`, which a version " +
                                                std::string(to_string(version)) + " bundle must carry"));
    }
    if (!out.signed_entry_timestamp && !has_timestamps) {
      return unexpected(pj::corrupt(f.path,
                                    "has no `inclusionPromise`, and the bundle no RFC 3161 timestamp: "
                                    "nothing would say when it was signed"));
    }
  }
  return out;
}

Result<DsseEnvelope> dsse_envelope(const pj::Field& f) {
  KH_ASSIGN_OR_RETURN(const json* envelope, pj::object(f));
  DsseEnvelope out;
  KH_ASSIGN_OR_RETURN(out.payload, pj::bytes(pj::field(*envelope, f.path, "payload")));
  KH_ASSIGN_OR_RETURN(out.payload_type, pj::string(pj::field(*envelope, f.path, "payloadType")));
  const auto signatures_field = pj::field(*envelope, f.path, "signatures");
  KH_ASSIGN_OR_RETURN(const json* signatures, pj::nonempty_array(signatures_field, "the envelope is not signed"));
  for (std::size_t i = 0; i < signatures->size(); ++i) {
    const auto signature_field = pj::element(*signatures, signatures_field.path, i);
    KH_ASSIGN_OR_RETURN(const json* signature, pj::object(signature_field));
    DsseSignature s;
    KH_ASSIGN_OR_RETURN(s.sig, pj::bytes(pj::field(*signature, signature_field.path, "sig")));
    KH_ASSIGN_OR_RETURN(auto keyid, pj::optional_string(pj::field(*signature, signature_field.path, "keyid")));
    s.keyid = keyid.value_or("");
    out.signatures.push_back(std::move(s));
  }
  return out;
}

Result<MessageSignature> message_signature(const pj::Field& f) {
  KH_ASSIGN_OR_RETURN(const json* message, pj::object(f));
  MessageSignature out;
  const auto digest_field = pj::field(*message, f.path, "messageDigest");
  KH_ASSIGN_OR_RETURN(const json* digest, pj::optional_object(digest_field));
  if (digest != nullptr) {
    MessageDigest d;
    KH_ASSIGN_OR_RETURN(d.algorithm, pj::string(pj::field(*digest, digest_field.path, "algorithm")));
    KH_ASSIGN_OR_RETURN(d.digest, pj::bytes(pj::field(*digest, digest_field.path, "digest")));
    out.message_digest = std::move(d);
  }
  KH_ASSIGN_OR_RETURN(out.signature, pj::bytes(pj::field(*message, f.path, "signature")));
  if (out.signature.empty()) return unexpected(pj::corrupt(f.path + ".signature", "is empty"));
  return out;
}

}  // namespace

std::string_view to_string(BundleVersion version) {
  switch (version) {
    case BundleVersion::k0_1: return "0.1";
    case BundleVersion::k0_2: return "0.2";
    case BundleVersion::k0_3: return "0.3";
  }
  return "?";
}

Result<Bundle> Bundle::parse(std::string_view text) {
  KH_ASSIGN_OR_RETURN(const json root, pj::parse_object(text, "bundle"));
  Bundle out;
  const auto media_field = pj::field(root, kRoot, "mediaType");
  KH_ASSIGN_OR_RETURN(out.media_type, pj::string(media_field));
  const auto version = version_of(out.media_type);
  if (!version) {
    return unexpected(pj::corrupt(media_field.path, "is `" + out.media_type.substr(0, 80) +
                                                        "`, not a bundle version this library reads (0.1, 0.2, "
                                                        "0.3: application/vnd.dev.sigstore.bundle.v0.3+json)"));
  }
  out.version = *version;

  const auto material_field = pj::field(root, kRoot, "verificationMaterial");
  KH_ASSIGN_OR_RETURN(const json* material, pj::object(material_field));
  KH_RETURN_IF_ERROR(signing_material(*material, material_field.path, out));

  const auto timestamps_data_field = pj::field(*material, material_field.path, "timestampVerificationData");
  KH_ASSIGN_OR_RETURN(const json* timestamps_data, pj::optional_object(timestamps_data_field));
  if (timestamps_data != nullptr) {
    const auto list_field = pj::field(*timestamps_data, timestamps_data_field.path, "rfc3161Timestamps");
    KH_ASSIGN_OR_RETURN(const json* list, pj::optional_array(list_field));
    for (std::size_t i = 0; list != nullptr && i < list->size(); ++i) {
      const auto item_field = pj::element(*list, list_field.path, i);
      KH_ASSIGN_OR_RETURN(const json* item, pj::object(item_field));
      KH_ASSIGN_OR_RETURN(auto der, pj::bytes(pj::field(*item, item_field.path, "signedTimestamp")));
      out.rfc3161_timestamps.push_back(std::move(der));
    }
  }

  const auto entries_field = pj::field(*material, material_field.path, "tlogEntries");
  KH_ASSIGN_OR_RETURN(const json* entries, pj::optional_array(entries_field));
  for (std::size_t i = 0; entries != nullptr && i < entries->size(); ++i) {
    KH_ASSIGN_OR_RETURN(auto entry, tlog_entry(pj::element(*entries, entries_field.path, i), out.version,
                                               !out.rfc3161_timestamps.empty()));
    out.tlog_entries.push_back(std::move(entry));
  }

  const auto message_field = pj::field(root, kRoot, "messageSignature");
  const auto envelope_field = pj::field(root, kRoot, "dsseEnvelope");
  if ((message_field.value != nullptr) == (envelope_field.value != nullptr)) {
    return unexpected(pj::corrupt(kRoot, "must hold exactly one of `messageSignature` and `dsseEnvelope`"));
  }
  if (message_field.value != nullptr) {
    KH_ASSIGN_OR_RETURN(auto message, message_signature(message_field));
    out.content = std::move(message);
  } else {
    KH_ASSIGN_OR_RETURN(auto envelope, dsse_envelope(envelope_field));
    out.content = std::move(envelope);
  }
  return out;
}

const std::string& Bundle::signature() const {
  if (const auto* message = std::get_if<MessageSignature>(&content)) return message->signature;
  return std::get<DsseEnvelope>(content).signatures.front().sig;
}

}  // namespace kernelhub::sigstore
