#include "test_instance.hpp"

#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/ts.h>
#include <openssl/x509v3.h>

#include <stdexcept>

#include "kernelhub/base/internal/base64.hpp"
#include "kernelhub/base/internal/hex.hpp"
#include "kernelhub/base/internal/sha256.hpp"
#include "kernelhub/sigstore/bundle.hpp"
#include "kernelhub/sigstore/internal/dsse.hpp"
#include "kernelhub/sigstore/internal/inclusion_proof.hpp"
#include "kernelhub/sigstore/internal/openssl_handles.hpp"
#include "kernelhub/sigstore/internal/signed_entry_timestamp.hpp"

namespace kernelhub::sigstore::testing {

namespace {

using nlohmann::json;
using std::chrono::seconds;

// 2026-01-01T00:00:00Z: every signing certificate starts then.
constexpr std::int64_t kLeafNotBefore = 1767225600;
constexpr std::int64_t kYear = 365 * 24 * 3600;

void check(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string("test instance: ") + what);
}

std::string sha256_bytes(std::string_view data) {
  const auto d = kernelhub::sha256(data);
  return std::string(d.begin(), d.end());
}

UniquePkey generate(const char* type, const char* curve = nullptr) {
  UniquePkey key(curve ? EVP_PKEY_Q_keygen(nullptr, nullptr, type, curve) : EVP_PKEY_Q_keygen(nullptr, nullptr, type));
  check(key != nullptr, "key generation");
  return key;
}

std::string spki(EVP_PKEY* key) {
  std::string out = encoded([&](unsigned char** der) { return i2d_PUBKEY(key, der); });
  check(!out.empty(), "i2d_PUBKEY");
  return out;
}

// ECDSA over SHA-256, or Ed25519 over the message.
std::string sign(EVP_PKEY* key, std::string_view message) {
  UniqueMdCtx ctx(EVP_MD_CTX_new());
  const bool ed25519 = EVP_PKEY_get_base_id(key) == EVP_PKEY_ED25519;
  check(EVP_DigestSignInit_ex(ctx.get(), nullptr, ed25519 ? nullptr : "SHA256", nullptr, nullptr, key, nullptr) == 1,
        "sign init");
  std::size_t size = 0;
  const auto* data = reinterpret_cast<const unsigned char*>(message.data());
  check(EVP_DigestSign(ctx.get(), nullptr, &size, data, message.size()) == 1, "sign size");
  std::string out(size, '\0');
  check(EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(out.data()), &size, data, message.size()) == 1,
        "sign");
  out.resize(size);
  return out;
}

std::string der_of(X509* x509) {
  std::string out = encoded([&](unsigned char** der) { return i2d_X509(x509, der); });
  check(!out.empty(), "i2d_X509");
  return out;
}

std::string pem_of(X509* x509) {
  UniqueBio bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509(bio.get(), x509);
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(size));
}

void add_extension(X509* subject, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, subject, nullptr, nullptr, 0);
  X509_EXTENSION* extension = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  check(extension != nullptr, "extension");
  X509_add_ext(subject, extension, -1);
  X509_EXTENSION_free(extension);
}

void add_raw_extension(X509* subject, const char* oid, std::string_view value) {
  UniqueAsn1Object object(OBJ_txt2obj(oid, 1));
  UniqueAsn1String data(ASN1_OCTET_STRING_new());
  ASN1_OCTET_STRING_set(data.get(), reinterpret_cast<const unsigned char*>(value.data()),
                        static_cast<int>(value.size()));
  X509_EXTENSION* extension = X509_EXTENSION_create_by_OBJ(nullptr, object.get(), 0, data.get());
  check(extension != nullptr, "raw extension");
  X509_add_ext(subject, extension, -1);
  X509_EXTENSION_free(extension);
}

std::string der_utf8(std::string_view text) {
  UniqueAsn1String s(ASN1_UTF8STRING_new());
  ASN1_STRING_set(s.get(), text.data(), static_cast<int>(text.size()));
  return encoded([&](unsigned char** der) { return i2d_ASN1_UTF8STRING(s.get(), der); });
}

std::string der_octets(std::string_view bytes) {
  UniqueAsn1String s(ASN1_OCTET_STRING_new());
  ASN1_OCTET_STRING_set(s.get(), reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
  return encoded([&](unsigned char** der) { return i2d_ASN1_OCTET_STRING(s.get(), der); });
}

UniqueX509 certificate(const char* common_name, X509* issuer, EVP_PKEY* issuer_key, EVP_PKEY* subject_key,
                       std::int64_t not_before, std::int64_t not_after, long serial) {
  UniqueX509 x509(X509_new());
  X509_set_version(x509.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(x509.get()), serial);
  X509_NAME* name = X509_get_subject_name(x509.get());
  if (common_name != nullptr) {
    X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("test.example"), -1, -1,
                               0);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(common_name), -1, -1,
                               0);
  }
  X509_set_issuer_name(x509.get(), issuer != nullptr ? X509_get_subject_name(issuer) : name);
  ASN1_TIME_set(X509_getm_notBefore(x509.get()), static_cast<time_t>(not_before));
  ASN1_TIME_set(X509_getm_notAfter(x509.get()), static_cast<time_t>(not_after));
  X509_set_pubkey(x509.get(), subject_key);
  (void)issuer_key;
  return x509;
}

void sign_certificate(X509* x509, EVP_PKEY* issuer_key) {
  check(X509_sign(x509, issuer_key, EVP_sha256()) > 0, "X509_sign");
}

void append_number(std::string& out, std::uint64_t value, std::size_t size) {
  for (std::size_t i = size; i > 0; --i) out.push_back(static_cast<char>((value >> (8 * (i - 1))) & 0xff));
}

std::string b64(std::string_view bytes) {
  return base64_encode(bytes);
}

json validity(std::int64_t start) {
  return {{"start", to_rfc3339(Instant{seconds{start}})}};
}

std::string mth(const std::vector<std::string>& leaves, std::size_t begin, std::size_t end) {
  if (end - begin == 1) return merkle_leaf_hash(leaves[begin]);
  std::size_t split = 1;
  while (split * 2 < end - begin) split *= 2;
  std::string node = "\x01" + mth(leaves, begin, begin + split) + mth(leaves, begin + split, end);
  return sha256_bytes(node);
}

void audit_path(const std::vector<std::string>& leaves, std::size_t index, std::size_t begin, std::size_t end,
                std::vector<std::string>& out) {
  if (end - begin == 1) return;
  std::size_t split = 1;
  while (split * 2 < end - begin) split *= 2;
  if (index < begin + split) {
    audit_path(leaves, index, begin, begin + split, out);
    out.push_back(mth(leaves, begin + split, end));
  } else {
    audit_path(leaves, index, begin + split, end, out);
    out.push_back(mth(leaves, begin, begin + split));
  }
}

int fixed_time(TS_RESP_CTX*, void* data, long* sec, long* usec) {
  *sec = static_cast<long>(*static_cast<std::int64_t*>(data));
  *usec = 0;
  return 1;
}

}  // namespace

MerkleFixture merkle_fixture(const std::string& leaf, std::int64_t index, std::int64_t size) {
  std::vector<std::string> leaves;
  for (std::int64_t i = 0; i < size; ++i) leaves.push_back(i == index ? leaf : "made-up leaf " + std::to_string(i));
  MerkleFixture out;
  out.root = mth(leaves, 0, leaves.size());
  audit_path(leaves, static_cast<std::size_t>(index), 0, leaves.size(), out.path);
  return out;
}

struct TestInstance::Keys {
  UniquePkey ca_key = generate("EC", "P-256");
  UniqueX509 ca;
  UniquePkey ct_key = generate("EC", "P-256");
  UniquePkey rekor_v1_key = generate("EC", "P-256");
  UniquePkey rekor_v2_key = generate("ED25519");
  UniquePkey tsa_root_key = generate("EC", "P-256");
  UniqueX509 tsa_root;
  UniquePkey tsa_key = generate("EC", "P-256");
  UniqueX509 tsa;
  UniquePkey managed_key = generate("EC", "P-256");

  std::string ct_log_id() const { return sha256_bytes(spki(ct_key.get())); }
  std::string rekor_v1_log_id() const { return sha256_bytes(spki(rekor_v1_key.get())); }
  // Rekor v2 logs are named by their note key's hash: SHA-256(name || "\n" || 0x01 || raw key).
  std::string rekor_v2_log_id() const {
    const std::string der = spki(rekor_v2_key.get());
    return sha256_bytes(std::string(kRekorV2Name) + "\n\x01" + der.substr(der.size() - 32));
  }
};

TestInstance::TestInstance() : keys_(std::make_unique<Keys>()) {
  auto& k = *keys_;
  const std::int64_t start = kLeafNotBefore - kYear;
  k.ca = certificate("sigstore-test", nullptr, k.ca_key.get(), k.ca_key.get(), start, kLeafNotBefore + 10 * kYear, 1);
  add_extension(k.ca.get(), k.ca.get(), NID_basic_constraints, "critical,CA:TRUE,pathlen:1");
  add_extension(k.ca.get(), k.ca.get(), NID_key_usage, "critical,keyCertSign,cRLSign");
  add_extension(k.ca.get(), k.ca.get(), NID_subject_key_identifier, "hash");
  sign_certificate(k.ca.get(), k.ca_key.get());

  k.tsa_root = certificate("tsa-root", nullptr, k.tsa_root_key.get(), k.tsa_root_key.get(), start,
                           kLeafNotBefore + 10 * kYear, 2);
  add_extension(k.tsa_root.get(), k.tsa_root.get(), NID_basic_constraints, "critical,CA:TRUE");
  add_extension(k.tsa_root.get(), k.tsa_root.get(), NID_key_usage, "critical,keyCertSign");
  add_extension(k.tsa_root.get(), k.tsa_root.get(), NID_subject_key_identifier, "hash");
  sign_certificate(k.tsa_root.get(), k.tsa_root_key.get());
  k.tsa = certificate("tsa", k.tsa_root.get(), k.tsa_root_key.get(), k.tsa_key.get(), start,
                      kLeafNotBefore + 10 * kYear, 3);
  add_extension(k.tsa.get(), k.tsa_root.get(), NID_key_usage, "critical,digitalSignature");
  add_extension(k.tsa.get(), k.tsa_root.get(), NID_ext_key_usage, "critical,timeStamping");
  add_extension(k.tsa.get(), k.tsa_root.get(), NID_subject_key_identifier, "hash");
  add_extension(k.tsa.get(), k.tsa_root.get(), NID_authority_key_identifier, "keyid");
  sign_certificate(k.tsa.get(), k.tsa_root_key.get());
}

TestInstance::~TestInstance() = default;

Instant TestInstance::leaf_not_before() const {
  return Instant{seconds{kLeafNotBefore}};
}

std::string TestInstance::root_certificate_der() const {
  return der_of(keys_->ca.get());
}
std::string TestInstance::last_leaf_der() const {
  return last_leaf_der_;
}

std::string TestInstance::managed_public_key_pem() const {
  UniqueBio bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_PUBKEY(bio.get(), keys_->managed_key.get());
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(size));
}

std::string TestInstance::managed_private_key_pem() const {
  UniqueBio bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_PrivateKey(bio.get(), keys_->managed_key.get(), nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(size));
}

json TestInstance::trusted_root() const {
  const auto& k = *keys_;
  const std::int64_t start = kLeafNotBefore - kYear;
  const auto log = [&](const char* url, EVP_PKEY* key, const char* details, const std::string& id) {
    return json{{"baseUrl", url},
                {"hashAlgorithm", "SHA2_256"},
                {"publicKey", {{"rawBytes", b64(spki(key))}, {"keyDetails", details}, {"validFor", validity(start)}}},
                {"logId", {{"keyId", b64(id)}}}};
  };
  return json{
      {"mediaType", "application/vnd.dev.sigstore.trustedroot+json;version=0.1"},
      {"tlogs",
       {log("https://rekor.test.example", k.rekor_v1_key.get(), "PKIX_ECDSA_P256_SHA_256", k.rekor_v1_log_id()),
        log("https://log2026.rekor.test.example", k.rekor_v2_key.get(), "PKIX_ED25519", k.rekor_v2_log_id())}},
      {"certificateAuthorities",
       {{{"subject", {{"organization", "test.example"}, {"commonName", "sigstore-test"}}},
         {"uri", "https://fulcio.test.example"},
         {"certChain", {{"certificates", {{{"rawBytes", b64(der_of(k.ca.get()))}}}}}},
         {"validFor", validity(start)}}}},
      {"ctlogs", {log("https://ctfe.test.example", k.ct_key.get(), "PKIX_ECDSA_P256_SHA_256", k.ct_log_id())}},
      {"timestampAuthorities",
       {{{"subject", {{"organization", "test.example"}, {"commonName", "tsa"}}},
         {"uri", "https://tsa.test.example"},
         {"certChain",
          {{"certificates",
            {{{"rawBytes", b64(der_of(k.tsa.get()))}}, {{"rawBytes", b64(der_of(k.tsa_root.get()))}}}}}},
         {"validFor", validity(start)}}}},
  };
}

json TestInstance::bundle(const BundleOptions& options) const {
  const auto& k = *keys_;
  // The signing certificate, valid for ten minutes, with its SCT.
  UniquePkey leaf_key = generate("EC", "P-256");
  UniqueX509 leaf =
      certificate(nullptr, k.ca.get(), k.ca_key.get(), leaf_key.get(), kLeafNotBefore, kLeafNotBefore + 600, 100);
  add_extension(leaf.get(), k.ca.get(), NID_key_usage, "critical,digitalSignature");
  add_extension(leaf.get(), k.ca.get(), NID_ext_key_usage, options.leaf.code_signing ? "codeSigning" : "serverAuth");
  add_extension(leaf.get(), k.ca.get(), NID_subject_key_identifier, "hash");
  add_extension(leaf.get(), k.ca.get(), NID_authority_key_identifier, "keyid");
  add_extension(leaf.get(), k.ca.get(), NID_subject_alt_name, ("critical,URI:" + options.leaf.san).c_str());
  if (options.leaf.issuer_v1) add_raw_extension(leaf.get(), "1.3.6.1.4.1.57264.1.1", *options.leaf.issuer_v1);
  if (options.leaf.issuer_v2) add_raw_extension(leaf.get(), "1.3.6.1.4.1.57264.1.8", der_utf8(*options.leaf.issuer_v2));
  if (options.leaf.build_signer_uri) {
    add_raw_extension(leaf.get(), "1.3.6.1.4.1.57264.1.9", der_utf8(*options.leaf.build_signer_uri));
  }
  if (options.leaf.source_repository_uri) {
    add_raw_extension(leaf.get(), "1.3.6.1.4.1.57264.1.12", der_utf8(*options.leaf.source_repository_uri));
  }
  sign_certificate(leaf.get(), k.ca_key.get());
  if (options.leaf.embed_sct) {
    const std::string tbs = encoded([&](unsigned char** der) { return i2d_re_X509_tbs(leaf.get(), der); });
    const std::uint64_t timestamp_ms = static_cast<std::uint64_t>(kLeafNotBefore) * 1000 + 500;
    std::string signed_data;
    append_number(signed_data, 0, 2);  // v1, certificate_timestamp
    append_number(signed_data, timestamp_ms, 8);
    append_number(signed_data, 1, 2);  // precert_entry
    signed_data += sha256_bytes(spki(k.ca_key.get()));
    append_number(signed_data, tbs.size(), 3);
    signed_data += tbs;
    append_number(signed_data, 0, 2);  // no extensions
    const std::string signature = sign(k.ct_key.get(), signed_data);
    std::string sct;
    sct.push_back('\x00');
    sct += k.ct_log_id();
    append_number(sct, timestamp_ms, 8);
    append_number(sct, 0, 2);
    sct.push_back('\x04');  // sha256
    sct.push_back('\x03');  // ecdsa
    append_number(sct, signature.size(), 2);
    sct += signature;
    std::string list;
    append_number(list, sct.size() + 2, 2);
    append_number(list, sct.size(), 2);
    list += sct;
    add_raw_extension(leaf.get(), "1.3.6.1.4.1.11129.2.4.2", der_octets(list));
    sign_certificate(leaf.get(), k.ca_key.get());
  }
  const std::string leaf_der = der_of(leaf.get());
  last_leaf_der_ = leaf_der;

  // The signature: over the artifact, or over PAE of an in-toto statement about it.
  const std::string artifact_sha256 = sha256_bytes(options.artifact);
  std::string statement, signed_bytes, signature, digest;
  if (options.dsse) {
    statement = json{{"_type", "https://in-toto.io/Statement/v1"},
                     {"subject", {{{"name", "artifact"}, {"digest", {{"sha256", to_hex(artifact_sha256)}}}}}},
                     {"predicateType", "https://kernelhub.test/predicate"},
                     {"predicate", json::object()}}
                    .dump();
    signed_bytes = pre_authentication_encoding(kInTotoPayloadType, statement);
    digest = sha256_bytes(signed_bytes);
  } else {
    signed_bytes = options.artifact;
    digest = artifact_sha256;
  }
  signature = sign(leaf_key.get(), signed_bytes);

  // The log entry.
  const bool v2 = options.log == LogKind::kRekorV2;
  json body;
  if (v2) {
    body = {
        {"apiVersion", "0.0.2"},
        {"kind", "hashedrekord"},
        {"spec",
         {{"hashedRekordV002",
           {{"data", {{"algorithm", "SHA2_256"}, {"digest", b64(digest)}}},
            {"signature",
             {{"content", b64(signature)},
              {"verifier",
               {{"keyDetails", "PKIX_ECDSA_P256_SHA_256"}, {"x509Certificate", {{"rawBytes", b64(leaf_der)}}}}}}}}}}}};
  } else if (options.dsse) {
    body = {{"apiVersion", "0.0.1"},
            {"kind", "dsse"},
            {"spec",
             {{"payloadHash", {{"algorithm", "sha256"}, {"value", to_hex(sha256_bytes(statement))}}},
              {"signatures", {{{"signature", b64(signature)}, {"verifier", b64(pem_of(leaf.get()))}}}}}}};
  } else {
    body = {{"apiVersion", "0.0.1"},
            {"kind", "hashedrekord"},
            {"spec",
             {{"data", {{"hash", {{"algorithm", "sha256"}, {"value", to_hex(digest)}}}}},
              {"signature", {{"content", b64(signature)}, {"publicKey", {{"content", b64(pem_of(leaf.get()))}}}}}}}};
  }
  const std::string canonical_body = body.dump();
  const std::string log_id = v2 ? k.rekor_v2_log_id() : k.rekor_v1_log_id();
  EVP_PKEY* log_key = v2 ? k.rekor_v2_key.get() : k.rekor_v1_key.get();
  const std::string log_name = v2 ? kRekorV2Name : kRekorV1Name;
  const auto tree = merkle_fixture(canonical_body, options.log_index, options.tree_size);
  const std::string origin = options.checkpoint_origin.value_or(v2 ? log_name : log_name + " - 1234567890");
  const std::string note = origin + "\n" + std::to_string(options.tree_size) + "\n" + b64(tree.root) + "\n";
  const std::string checkpoint =
      note + "\n\xe2\x80\x94 " + log_name + " " + b64(log_id.substr(0, 4) + sign(log_key, note)) + "\n";
  json hashes = json::array();
  for (const auto& hash : tree.path) hashes.push_back(b64(hash));
  const std::int64_t signed_at = kLeafNotBefore + options.signed_after;
  json entry = {{"logIndex", std::to_string(options.log_index)},
                {"logId", {{"keyId", b64(log_id)}}},
                {"kindVersion", {{"kind", body["kind"]}, {"version", body["apiVersion"]}}},
                {"inclusionProof",
                 {{"logIndex", std::to_string(options.log_index)},
                  {"rootHash", b64(tree.root)},
                  {"treeSize", std::to_string(options.tree_size)},
                  {"hashes", hashes},
                  {"checkpoint", {{"envelope", checkpoint}}}}},
                {"canonicalizedBody", b64(canonical_body)}};
  if (!v2) {
    TransparencyLogEntry parsed;
    parsed.log_index = options.log_index;
    parsed.log_id = log_id;
    parsed.integrated_time = signed_at;
    parsed.canonicalized_body = canonical_body;
    entry["integratedTime"] = std::to_string(signed_at);
    entry["inclusionPromise"] = {{"signedEntryTimestamp", b64(sign(log_key, signed_entry_timestamp_payload(parsed)))}};
  }

  json material;
  if (options.media_type.find("0.3") != std::string::npos) {
    material["certificate"] = {{"rawBytes", b64(leaf_der)}};
  } else {
    material["x509CertificateChain"] = {{"certificates", {{{"rawBytes", b64(leaf_der)}}}}};
  }
  material["tlogEntries"] = {entry};
  if (options.timestamp || v2) {
    UniqueTsRespCtx ctx(TS_RESP_CTX_new());
    UniqueAsn1Object policy(OBJ_txt2obj("1.3.6.1.4.1.57264.2", 1));
    std::int64_t when = signed_at;
    TS_RESP_CTX_set_signer_cert(ctx.get(), k.tsa.get());
    TS_RESP_CTX_set_signer_key(ctx.get(), k.tsa_key.get());
    TS_RESP_CTX_set_def_policy(ctx.get(), policy.get());
    TS_RESP_CTX_add_md(ctx.get(), EVP_sha256());
    TS_RESP_CTX_set_time_cb(ctx.get(), fixed_time, &when);
    TS_RESP_CTX_set_ess_cert_id_digest(ctx.get(), EVP_sha256());
    const std::string imprint = sha256_bytes(signature);
    UniqueTsReq request(TS_REQ_new());
    UniqueTsMsgImprint message(TS_MSG_IMPRINT_new());
    X509_ALGOR* algorithm = X509_ALGOR_new();
    X509_ALGOR_set0(algorithm, OBJ_nid2obj(NID_sha256), V_ASN1_NULL, nullptr);
    TS_MSG_IMPRINT_set_algo(message.get(), algorithm);
    X509_ALGOR_free(algorithm);
    TS_MSG_IMPRINT_set_msg(message.get(), reinterpret_cast<unsigned char*>(const_cast<char*>(imprint.data())),
                           static_cast<int>(imprint.size()));
    TS_REQ_set_version(request.get(), 1);
    TS_REQ_set_msg_imprint(request.get(), message.get());
    TS_REQ_set_cert_req(request.get(), 1);
    UniqueBio request_bio(BIO_new(BIO_s_mem()));
    i2d_TS_REQ_bio(request_bio.get(), request.get());
    UniqueTsResponse response(TS_RESP_create_response(ctx.get(), request_bio.get()));
    check(response != nullptr, "TS_RESP_create_response");
    check(ASN1_INTEGER_get(TS_STATUS_INFO_get0_status(TS_RESP_get_status_info(response.get()))) == TS_STATUS_GRANTED,
          "timestamp granted");
    const std::string response_der = encoded([&](unsigned char** der) { return i2d_TS_RESP(response.get(), der); });
    material["timestampVerificationData"] = {{"rfc3161Timestamps", {{{"signedTimestamp", b64(response_der)}}}}};
  }

  json out = {{"mediaType", options.media_type}, {"verificationMaterial", material}};
  if (options.dsse) {
    out["dsseEnvelope"] = {{"payload", b64(statement)},
                           {"payloadType", kInTotoPayloadType},
                           {"signatures", {{{"sig", b64(signature)}, {"keyid", ""}}}}};
  } else {
    out["messageSignature"] = {{"messageDigest", {{"algorithm", "SHA2_256"}, {"digest", b64(digest)}}},
                               {"signature", b64(signature)}};
  }
  return out;
}

}  // namespace kernelhub::sigstore::testing
