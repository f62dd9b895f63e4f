#include "kernelhub/sigstore/internal/log_entry_body.hpp"

#include <openssl/pem.h>

#include <nlohmann/json.hpp>

#include "kernelhub/base/internal/hex.hpp"
#include "kernelhub/sigstore/internal/openssl_handles.hpp"
#include "kernelhub/sigstore/internal/protobuf_json.hpp"

namespace kernelhub::sigstore {

namespace {

namespace pj = protobuf_json;
using nlohmann::json;

constexpr std::string_view kBody = "log entry body";

Error differs(std::string what) {
  return Error{ErrorCode::kBadSignature, "the transparency log entry " + std::move(what)};
}

// The DER inside a PEM text (one CERTIFICATE or PUBLIC KEY block); nullopt if it is neither.
std::optional<std::string> pem_der(std::string_view pem) {
  UniqueBio bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  char* name = nullptr;
  char* header = nullptr;
  unsigned char* data = nullptr;
  long size = 0;
  const int read = bio ? PEM_read_bio(bio.get(), &name, &header, &data, &size) : 0;
  const UniqueOpensslChars owned_name(name), owned_header(header);
  const UniqueOpensslBytes owned_data(data);
  if (read != 1) return std::nullopt;
  const std::string label = name;
  std::string der(reinterpret_cast<const char*>(data), static_cast<std::size_t>(size));
  if (label != "CERTIFICATE" && label != "PUBLIC KEY") return std::nullopt;
  return der;
}

// Whether the base64 PEM `field` names the signer: its certificate, or (a managed key) its key.
Status check_signer_pem(const pj::Field& field, const EntryExpectation& expected) {
  KH_ASSIGN_OR_RETURN(auto pem, pj::bytes(field));
  const auto der = pem_der(pem);
  if (!der) return unexpected(pj::corrupt(field.path, "is not a PEM certificate or public key"));
  const std::string& wanted = expected.certificate_der.empty() ? expected.public_key_der : expected.certificate_der;
  if (*der != wanted) {
    return unexpected(differs("names another " +
                              std::string(expected.certificate_der.empty() ? "public key" : "certificate") +
                              " than the bundle's (" + field.path + ")"));
  }
  return {};
}

Status check_hex_hash(const pj::Field& field, HashAlgorithm hash, std::string_view digest, std::string_view what) {
  KH_ASSIGN_OR_RETURN(const json* object, pj::object(field));
  KH_ASSIGN_OR_RETURN(auto algorithm, pj::string(pj::field(*object, field.path, "algorithm")));
  KH_ASSIGN_OR_RETURN(auto value, pj::string(pj::field(*object, field.path, "value")));
  if (algorithm != rekor_name(hash)) {
    return unexpected(differs("records " + std::string(what) + " as " + algorithm + ", the bundle's is " +
                              std::string(rekor_name(hash)) + " (" + field.path + ")"));
  }
  if (value != to_hex(digest)) {
    return unexpected(differs("records " + std::string(what) + " " + value.substr(0, 64) + ", the bundle's is " +
                              to_hex(digest) + " (" + field.path + ")"));
  }
  return {};
}

Status check_signature_bytes(const pj::Field& field, std::string_view signature, bool twice_encoded = false) {
  KH_ASSIGN_OR_RETURN(auto recorded, pj::bytes(field));
  if (twice_encoded) {
    // A field that is not base64 twice over cannot record the bundle's signature.
    auto inner = pj::decode_base64(recorded);
    recorded = inner ? std::move(*inner) : std::string();
  }
  if (recorded != signature)
    return unexpected(differs("records another signature than the bundle's (" + field.path + ")"));
  return {};
}

Status hashedrekord_v001(const json& spec, const EntryExpectation& expected) {
  if (expected.envelope != nullptr) {
    return unexpected(
        differs("is a hashedrekord 0.0.1, which records a message signature, and the bundle holds "
                "a DSSE envelope"));
  }
  const std::string path = std::string(kBody) + ".spec";
  const auto data_field = pj::field(spec, path, "data");
  KH_ASSIGN_OR_RETURN(const json* data, pj::object(data_field));
  KH_RETURN_IF_ERROR(check_hex_hash(pj::field(*data, data_field.path, "hash"), expected.hash, expected.digest,
                                    "the artifact's digest"));
  const auto signature_field = pj::field(spec, path, "signature");
  KH_ASSIGN_OR_RETURN(const json* signature, pj::object(signature_field));
  KH_RETURN_IF_ERROR(check_signature_bytes(pj::field(*signature, signature_field.path, "content"), expected.signature));
  const auto key_field = pj::field(*signature, signature_field.path, "publicKey");
  KH_ASSIGN_OR_RETURN(const json* key, pj::object(key_field));
  return check_signer_pem(pj::field(*key, key_field.path, "content"), expected);
}

Status hashedrekord_v002(const json& spec, const EntryExpectation& expected) {
  const std::string path = std::string(kBody) + ".spec";
  const auto record_field = pj::field(spec, path, "hashedRekordV002");
  KH_ASSIGN_OR_RETURN(const json* record, pj::object(record_field));
  const auto data_field = pj::field(*record, record_field.path, "data");
  KH_ASSIGN_OR_RETURN(const json* data, pj::object(data_field));
  KH_ASSIGN_OR_RETURN(auto algorithm, pj::string(pj::field(*data, data_field.path, "algorithm")));
  KH_ASSIGN_OR_RETURN(auto digest, pj::bytes(pj::field(*data, data_field.path, "digest")));
  const std::string what = expected.envelope != nullptr ? "the DSSE envelope's PAE digest" : "the artifact's digest";
  if (algorithm != protobuf_name(expected.hash) || digest != expected.digest) {
    return unexpected(differs("records " + what + " as " + algorithm + " " + to_hex(digest) + ", the bundle's is " +
                              std::string(protobuf_name(expected.hash)) + " " + to_hex(expected.digest)));
  }
  const auto signature_field = pj::field(*record, record_field.path, "signature");
  KH_ASSIGN_OR_RETURN(const json* signature, pj::object(signature_field));
  KH_RETURN_IF_ERROR(check_signature_bytes(pj::field(*signature, signature_field.path, "content"), expected.signature));
  const auto verifier_field = pj::field(*signature, signature_field.path, "verifier");
  KH_ASSIGN_OR_RETURN(const json* verifier, pj::object(verifier_field));
  KH_ASSIGN_OR_RETURN(auto key_details, pj::string(pj::field(*verifier, verifier_field.path, "keyDetails")));
  if (key_details != expected.key_details) {
    return unexpected(
        differs("records the signer's key as " + key_details + ", the bundle's is " + expected.key_details));
  }
  const auto certificate_field = pj::field(*verifier, verifier_field.path, "x509Certificate");
  const auto key_field = pj::field(*verifier, verifier_field.path, "publicKey");
  const bool by_certificate = !expected.certificate_der.empty();
  const auto& signer_field = by_certificate ? certificate_field : key_field;
  if (signer_field.value == nullptr) {
    return unexpected(differs("names its signer by " + std::string(by_certificate ? "public key" : "certificate") +
                              ", the bundle by " + (by_certificate ? "certificate" : "public key")));
  }
  KH_ASSIGN_OR_RETURN(const json* signer, pj::object(signer_field));
  KH_ASSIGN_OR_RETURN(auto der, pj::bytes(pj::field(*signer, signer_field.path, "rawBytes")));
  if (der != (by_certificate ? expected.certificate_der : expected.public_key_der)) {
    return unexpected(differs("names another signer than the bundle's (" + signer_field.path + ")"));
  }
  return {};
}

Status dsse_v001(const json& spec, const EntryExpectation& expected) {
  if (expected.envelope == nullptr) {
    return unexpected(differs("is a dsse entry and the bundle holds a message signature"));
  }
  const std::string path = std::string(kBody) + ".spec";
  KH_RETURN_IF_ERROR(check_hex_hash(pj::field(spec, path, "payloadHash"), HashAlgorithm::kSha256,
                                    digest(HashAlgorithm::kSha256, expected.envelope->payload),
                                    "the DSSE payload's digest"));
  const auto signatures_field = pj::field(spec, path, "signatures");
  KH_ASSIGN_OR_RETURN(const json* signatures, pj::optional_array(signatures_field));
  const auto& wanted = expected.envelope->signatures;
  if (signatures == nullptr || signatures->size() != wanted.size()) {
    return unexpected(differs("records " + std::to_string(signatures ? signatures->size() : 0) +
                              " signature(s), the bundle's envelope has " + std::to_string(wanted.size())));
  }
  for (std::size_t i = 0; i < wanted.size(); ++i) {
    const auto item_field = pj::element(*signatures, signatures_field.path, i);
    KH_ASSIGN_OR_RETURN(const json* item, pj::object(item_field));
    KH_RETURN_IF_ERROR(check_signature_bytes(pj::field(*item, item_field.path, "signature"), wanted[i].sig));
    KH_RETURN_IF_ERROR(check_signer_pem(pj::field(*item, item_field.path, "verifier"), expected));
  }
  return {};
}

Status intoto_v002(const json& spec, const EntryExpectation& expected) {
  if (expected.envelope == nullptr) {
    return unexpected(differs("is an intoto entry and the bundle holds a message signature"));
  }
  const std::string path = std::string(kBody) + ".spec";
  const auto content_field = pj::field(spec, path, "content");
  KH_ASSIGN_OR_RETURN(const json* content, pj::object(content_field));
  KH_RETURN_IF_ERROR(check_hex_hash(pj::field(*content, content_field.path, "payloadHash"), HashAlgorithm::kSha256,
                                    digest(HashAlgorithm::kSha256, expected.envelope->payload),
                                    "the DSSE payload's digest"));
  const auto envelope_field = pj::field(*content, content_field.path, "envelope");
  KH_ASSIGN_OR_RETURN(const json* envelope, pj::object(envelope_field));
  const auto signatures_field = pj::field(*envelope, envelope_field.path, "signatures");
  KH_ASSIGN_OR_RETURN(const json* signatures, pj::optional_array(signatures_field));
  if (signatures == nullptr || signatures->size() != 1 || expected.envelope->signatures.size() != 1) {
    return unexpected(differs("and the envelope must each hold exactly one signature"));
  }
  const auto item_field = pj::element(*signatures, signatures_field.path, 0);
  KH_ASSIGN_OR_RETURN(const json* item, pj::object(item_field));
  KH_RETURN_IF_ERROR(check_signature_bytes(pj::field(*item, item_field.path, "sig"),
                                           expected.envelope->signatures[0].sig, /*twice_encoded=*/true));
  return check_signer_pem(pj::field(*item, item_field.path, "publicKey"), expected);
}

}  // namespace

Status check_log_entry_body(const TransparencyLogEntry& entry, const EntryExpectation& expected) {
  KH_ASSIGN_OR_RETURN(const json body, pj::parse_object(entry.canonicalized_body, std::string(kBody)));
  KH_ASSIGN_OR_RETURN(auto kind, pj::string(pj::field(body, kBody, "kind")));
  KH_ASSIGN_OR_RETURN(auto version, pj::string(pj::field(body, kBody, "apiVersion")));
  if (kind != entry.kind || version != entry.version) {
    return unexpected(
        differs("body is a " + kind + " " + version + ", its kindVersion says " + entry.kind + " " + entry.version));
  }
  KH_ASSIGN_OR_RETURN(const json* spec, pj::object(pj::field(body, kBody, "spec")));
  if (kind == "hashedrekord" && version == "0.0.1") return hashedrekord_v001(*spec, expected);
  if (kind == "hashedrekord" && version == "0.0.2") return hashedrekord_v002(*spec, expected);
  if (kind == "dsse" && version == "0.0.1") return dsse_v001(*spec, expected);
  if (kind == "intoto" && version == "0.0.2") return intoto_v002(*spec, expected);
  return unexpected(differs("is a " + kind + " " + version +
                            " entry; this library checks hashedrekord 0.0.1 and 0.0.2, dsse 0.0.1 and intoto 0.0.2"));
}

}  // namespace kernelhub::sigstore
