#include "kernelhub/sigstore/trusted_root.hpp"

#include <nlohmann/json.hpp>

#include "kernelhub/base/internal/hex.hpp"
#include "kernelhub/base/internal/read_file.hpp"
#include "kernelhub/sigstore/internal/embedded_data.hpp"
#include "kernelhub/sigstore/internal/openssl_handles.hpp"
#include "kernelhub/sigstore/internal/protobuf_json.hpp"
#include "kernelhub/sigstore/internal/trusted_material.hpp"

namespace kernelhub::sigstore {

namespace {

namespace pj = protobuf_json;
using nlohmann::json;

constexpr std::string_view kMediaType = "application/vnd.dev.sigstore.trustedroot+json;version=0.1";

Result<ValidityPeriod> validity(const pj::Field& f) {
  KH_ASSIGN_OR_RETURN(const json* range, pj::object(f));
  const auto start_field = pj::field(*range, f.path, "start");
  if (start_field.value == nullptr) {
    return unexpected(pj::corrupt(start_field.path, "is missing: an entry must say since when it is trusted"));
  }
  KH_ASSIGN_OR_RETURN(auto start_text, pj::string(start_field));
  auto start = parse_rfc3339(start_text);
  if (!start) return unexpected(pj::corrupt(start_field.path, start.error().message));
  ValidityPeriod out{*start, std::nullopt};
  const auto end_field = pj::field(*range, f.path, "end");
  KH_ASSIGN_OR_RETURN(auto end_text, pj::optional_string(end_field));
  if (end_text) {
    auto end = parse_rfc3339(*end_text);
    if (!end) return unexpected(pj::corrupt(end_field.path, end.error().message));
    if (*end < *start) return unexpected(pj::corrupt(f.path, "ends before it starts"));
    out.end = *end;
  }
  return out;
}

Result<LogKey> transparency_log(const pj::Field& f) {
  KH_ASSIGN_OR_RETURN(const json* log, pj::object(f));
  LogKey out;
  auto& instance = out.instance;
  KH_ASSIGN_OR_RETURN(auto base_url, pj::optional_string(pj::field(*log, f.path, "baseUrl")));
  instance.base_url = base_url.value_or("");
  const auto hash_field = pj::field(*log, f.path, "hashAlgorithm");
  KH_ASSIGN_OR_RETURN(instance.hash_algorithm, pj::string(hash_field));
  if (instance.hash_algorithm != "SHA2_256") {
    return unexpected(pj::corrupt(hash_field.path,
                                  "is `" + instance.hash_algorithm + "`: Sigstore's logs are SHA2_256 Merkle trees"));
  }
  const auto key_field = pj::field(*log, f.path, "publicKey");
  KH_ASSIGN_OR_RETURN(const json* key, pj::object(key_field));
  const auto raw_field = pj::field(*key, key_field.path, "rawBytes");
  KH_ASSIGN_OR_RETURN(instance.public_key, pj::bytes(raw_field));
  KH_ASSIGN_OR_RETURN(instance.key_details, pj::string(pj::field(*key, key_field.path, "keyDetails")));
  KH_ASSIGN_OR_RETURN(instance.valid_for, validity(pj::field(*key, key_field.path, "validFor")));
  const auto id_field = pj::field(*log, f.path, "logId");
  KH_ASSIGN_OR_RETURN(const json* id, pj::object(id_field));
  const auto key_id_field = pj::field(*id, id_field.path, "keyId");
  KH_ASSIGN_OR_RETURN(instance.log_id, pj::bytes(key_id_field));
  if (instance.log_id.empty()) return unexpected(pj::corrupt(key_id_field.path, "is empty"));

  // A key of a kind this library does not know is kept, unusable, as sigstore-python keeps going
  // past one: a root that adds a new kind of key still verifies what its other keys signed.
  const bool pkcs1 = instance.key_details == "PKCS1_RSA_PKCS1V5";
  const bool known = pkcs1 || instance.key_details.starts_with("PKIX_ECDSA_") ||
                     instance.key_details == "PKIX_ED25519" || instance.key_details.starts_with("PKIX_RSA_PKCS1V15_");
  if (known) {
    auto parsed = pkcs1 ? VerificationKey::from_pkcs1_rsa_der(instance.public_key)
                        : VerificationKey::from_spki_der(instance.public_key);
    if (!parsed) return unexpected(pj::corrupt(raw_field.path, "is " + parsed.error().message));
    out.key = std::move(*parsed);
  }
  instance.key_usable = out.key.has_value();
  return out;
}

Result<Authority> certificate_authority(const pj::Field& f) {
  KH_ASSIGN_OR_RETURN(const json* authority, pj::object(f));
  Authority out;
  auto& instance = out.instance;
  const auto subject_field = pj::field(*authority, f.path, "subject");
  KH_ASSIGN_OR_RETURN(const json* subject, pj::optional_object(subject_field));
  if (subject != nullptr) {
    KH_ASSIGN_OR_RETURN(auto organization,
                        pj::optional_string(pj::field(*subject, subject_field.path, "organization")));
    KH_ASSIGN_OR_RETURN(auto common_name, pj::optional_string(pj::field(*subject, subject_field.path, "commonName")));
    instance.subject = organization.value_or("") + "/" + common_name.value_or("");
  }
  KH_ASSIGN_OR_RETURN(auto uri, pj::optional_string(pj::field(*authority, f.path, "uri")));
  instance.uri = uri.value_or("");
  const auto chain_field = pj::field(*authority, f.path, "certChain");
  KH_ASSIGN_OR_RETURN(const json* chain, pj::object(chain_field));
  const auto certificates_field = pj::field(*chain, chain_field.path, "certificates");
  KH_ASSIGN_OR_RETURN(const json* certificates,
                      pj::nonempty_array(certificates_field, "an authority needs its certificates"));
  for (std::size_t i = 0; i < certificates->size(); ++i) {
    const auto certificate_field = pj::element(*certificates, certificates_field.path, i);
    KH_ASSIGN_OR_RETURN(const json* certificate, pj::object(certificate_field));
    const auto raw_field = pj::field(*certificate, certificate_field.path, "rawBytes");
    KH_ASSIGN_OR_RETURN(auto der, pj::bytes(raw_field));
    auto parsed = Certificate::parse_der(der);
    if (!parsed) return unexpected(pj::corrupt(raw_field.path, "is " + parsed.error().message));
    out.certificates.push_back(std::move(*parsed));
    instance.certificates.push_back(std::move(der));
  }
  KH_ASSIGN_OR_RETURN(instance.valid_for, validity(pj::field(*authority, f.path, "validFor")));
  return out;
}

template <typename T, typename Parse>
Result<std::vector<T>> each(const json& root, std::string_view name, Parse parse) {
  const auto list_field = pj::field(root, "trusted root", name);
  KH_ASSIGN_OR_RETURN(const json* list, pj::optional_array(list_field));
  std::vector<T> out;
  if (list == nullptr) return out;
  for (std::size_t i = 0; i < list->size(); ++i) {
    KH_ASSIGN_OR_RETURN(auto item, parse(pj::element(*list, list_field.path, i)));
    out.push_back(std::move(item));
  }
  return out;
}

TrustedRoot load_embedded(std::string_view json_text, const char* source) {
  auto parsed = TrustedRoot::parse(json_text, source);
  // The embedded roots are checked by the tests; one that does not parse is a broken build.
  if (!parsed) std::abort();
  return std::move(*parsed);
}

std::string hex_prefix(std::string_view bytes) {
  return to_hex(bytes.substr(0, 8));
}

void describe_logs(std::string& out, std::string_view title, const std::vector<LogKey>& logs) {
  out += std::string(title) + ": " + std::to_string(logs.size()) + "\n";
  for (const auto& log : logs) {
    const auto& i = log.instance;
    out += "  " + (i.base_url.empty() ? std::string("(no URL)") : i.base_url) + "\n";
    out += "    key " + (log.key ? log.key->description() : i.key_details + " (not usable here)") + ", log id " +
           hex_prefix(i.log_id) + "..., " + i.valid_for.to_string() + "\n";
  }
}

void describe_authorities(std::string& out, std::string_view title, const std::vector<Authority>& authorities) {
  out += std::string(title) + ": " + std::to_string(authorities.size()) + "\n";
  for (const auto& authority : authorities) {
    const auto& i = authority.instance;
    out += "  " + (i.uri.empty() ? std::string("(no URI)") : i.uri) + " (" + i.subject + ")\n";
    out += "    " + std::to_string(i.certificates.size()) + " certificate(s), " + i.valid_for.to_string() + "\n";
  }
}

}  // namespace

Result<TrustedRoot> TrustedRoot::parse(std::string_view text, std::string source) {
  const ClearOpensslErrorsOnExit clear_errors;
  auto parsed = pj::parse_object(text, "trusted root");
  if (!parsed) return unexpected(parsed.error().with_context(source));
  const json& root = *parsed;
  auto material = std::make_shared<TrustedMaterial>();
  material->source = std::move(source);
  const auto fail = [&](const Error& e) { return unexpected(e.with_context(material->source)); };
  auto media_type = pj::string(pj::field(root, "trusted root", "mediaType"));
  if (!media_type) return fail(media_type.error());
  if (*media_type != kMediaType) {
    return fail(Error{ErrorCode::kCorruptFile, "the trusted root's media type is `" + *media_type +
                                                   "`; this library reads `" + std::string(kMediaType) + "`"});
  }
  auto cas = each<Authority>(root, "certificateAuthorities", certificate_authority);
  if (!cas) return fail(cas.error());
  auto tlogs = each<LogKey>(root, "tlogs", transparency_log);
  if (!tlogs) return fail(tlogs.error());
  auto ctlogs = each<LogKey>(root, "ctlogs", transparency_log);
  if (!ctlogs) return fail(ctlogs.error());
  auto tsas = each<Authority>(root, "timestampAuthorities", certificate_authority);
  if (!tsas) return fail(tsas.error());
  material->certificate_authorities = std::move(*cas);
  material->transparency_logs = std::move(*tlogs);
  material->ct_logs = std::move(*ctlogs);
  material->timestamp_authorities = std::move(*tsas);
  for (const auto& a : material->certificate_authorities) material->ca_instances.push_back(a.instance);
  for (const auto& l : material->transparency_logs) material->tlog_instances.push_back(l.instance);
  for (const auto& l : material->ct_logs) material->ctlog_instances.push_back(l.instance);
  for (const auto& a : material->timestamp_authorities) material->tsa_instances.push_back(a.instance);
  return TrustedRoot(std::move(material));
}

Result<TrustedRoot> TrustedRoot::read(const std::filesystem::path& path) {
  KH_ASSIGN_OR_RETURN(auto text, read_file(path));
  return parse(text, "trusted root `" + path.string() + "`");
}

Result<TrustedRoot> TrustedRoot::from_environment(const EnvironmentSource& env) {
  const auto path = env(env_vars::kKernelhubSigstoreTrustedRoot);
  if (!path) return public_good();
  auto root = read(*path);
  if (!root) {
    return unexpected(
        root.error().with_context(std::string(env_vars::kKernelhubSigstoreTrustedRoot) + " names `" + *path + "`"));
  }
  return root;
}

const TrustedRoot& TrustedRoot::public_good() {
  static const TrustedRoot root = load_embedded(embedded::public_good_trusted_root(),
                                                "the embedded public-good trusted root (sigstore-python 4.5.1's)");
  return root;
}

const TrustedRoot& TrustedRoot::staging() {
  static const TrustedRoot root =
      load_embedded(embedded::staging_trusted_root(), "the embedded staging trusted root (sigstore-python 4.5.1's)");
  return root;
}

const std::string& TrustedRoot::source() const {
  return material_->source;
}
const std::vector<CertificateAuthorityInstance>& TrustedRoot::certificate_authorities() const {
  return material_->ca_instances;
}
const std::vector<TransparencyLogInstance>& TrustedRoot::transparency_logs() const {
  return material_->tlog_instances;
}
const std::vector<TransparencyLogInstance>& TrustedRoot::ct_logs() const {
  return material_->ctlog_instances;
}
const std::vector<CertificateAuthorityInstance>& TrustedRoot::timestamp_authorities() const {
  return material_->tsa_instances;
}

std::string TrustedRoot::describe() const {
  std::string out = "trusted root: " + material_->source + "\n";
  describe_authorities(out, "certificate authorities (Fulcio)", material_->certificate_authorities);
  describe_logs(out, "transparency logs (Rekor)", material_->transparency_logs);
  describe_logs(out, "certificate transparency logs", material_->ct_logs);
  describe_authorities(out, "timestamp authorities (RFC 3161)", material_->timestamp_authorities);
  return out;
}

const TrustedMaterial& trusted_material(const TrustedRoot& root) {
  return *root.material_;
}

const LogKey* find_log(const std::vector<LogKey>& logs, std::string_view log_id) {
  for (const auto& log : logs) {
    if (log.instance.log_id == log_id) return &log;
  }
  return nullptr;
}

}  // namespace kernelhub::sigstore
