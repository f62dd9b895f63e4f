#include "kernelhub/fetch/internal/signature_check.hpp"

#include <sys/stat.h>

#include <array>

#include <nlohmann/json.hpp>

#include "kernelhub/base/internal/atomic_file.hpp"
#include "kernelhub/base/internal/base64.hpp"
#include "kernelhub/base/internal/json_nesting.hpp"
#include "kernelhub/base/internal/read_file.hpp"
#include "kernelhub/base/internal/sha256.hpp"
#include "kernelhub/base/internal/state_dir.hpp"
#include "kernelhub/fetch/internal/problem.hpp"
#include "kernelhub/fetch/internal/verification_stamps.hpp"
#include "kernelhub/signing/internal/serial_store.hpp"
#include "kernelhub/signing/internal/signature_file.hpp"
#include "kernelhub/signing/internal/verify.hpp"
#include "kernelhub/sigstore/artifact.hpp"
#include "kernelhub/sigstore/bundle.hpp"
#include "kernelhub/sigstore/policy.hpp"
#include "kernelhub/sigstore/verify.hpp"

namespace kernelhub {

namespace fs = std::filesystem;

namespace {

// A bundle is a few KiB (a certificate, a log entry, a proof); a larger file is not one.
constexpr std::uintmax_t kMaxBundleSize = 1u << 20;

std::string where_of(std::string_view repo, std::string_view variant) {
  return "`" + std::string(repo) + "` variant `" + std::string(variant) + "`";
}

// The policy a repo's signers make: any of them. Errors: kInvalidArgument (a key that is not one).
Result<sigstore::Policy> policy_of(const std::vector<Signer>& signers) {
  std::vector<sigstore::Policy> alternatives;
  for (const Signer& signer : signers) {
    if (const auto* identity = std::get_if<WorkflowIdentity>(&signer.who)) {
      sigstore::IdentityRule rule;
      rule.oidc_issuer = identity->issuer;
      rule.source_repository_uri = identity->source_repository;
      rule.build_signer_uris = identity->workflows;
      alternatives.emplace_back(std::move(rule));
    } else {
      auto rule = sigstore::PublicKeyRule::from_pem(std::get<SigningKey>(signer.who).pem);
      if (!rule) return unexpected(rule.error().with_context(signer.origin));
      alternatives.emplace_back(std::move(*rule));
    }
  }
  if (alternatives.size() == 1) return std::move(alternatives.front());
  return sigstore::Policy::any_of(std::move(alternatives));
}

// The bundle's bytes: a small regular file (or the cache's link to one). Errors: kCorruptFile
// for anything else, kIo.
Result<std::string> read_bundle(const fs::path& path) {
  std::error_code ec;
  const fs::path target = fs::canonical(path, ec);
  if (ec) return unexpected(ErrorCode::kCorruptFile, "`" + path.string() + "` cannot be resolved: " + ec.message());
  const auto status = fs::status(target, ec);
  if (ec || !fs::is_regular_file(status)) {
    return unexpected(ErrorCode::kCorruptFile, "`" + std::string(kSigstoreBundleName) + "` is not a regular file");
  }
  if (fs::file_size(target, ec) > kMaxBundleSize) {
    return unexpected(ErrorCode::kCorruptFile,
                      "`" + std::string(kSigstoreBundleName) + "` is larger than 1 MiB, which no Sigstore bundle is");
  }
  return read_file(target);
}

// Verifies `bundle` over `metadata` (step 1): a certificate against the root, a managed key with
// the repo's configured keys. The signer, or why it does not verify (kBadSignature); nullopt:
// signed with a key none of the repo's signers names.
Result<std::optional<sigstore::Signer>> verify_bundle(const sigstore::Bundle& bundle, const std::string& metadata,
                                                      const std::vector<Signer>& signers,
                                                      const SignatureSettings& settings) {
  const sigstore::Artifact artifact = sigstore::Artifact::bytes(metadata);
  KH_ASSIGN_OR_RETURN(const auto root, settings.root());
  if (bundle.has_certificate()) {
    KH_ASSIGN_OR_RETURN(sigstore::VerifiedBundle verified, sigstore::verify(bundle, artifact, *root, {}));
    return std::optional<sigstore::Signer>(std::move(verified.signer));
  }
  // A managed key: only a key the configuration names can check it. An organisation without a
  // Rekor of its own signs without a log entry: its configured key is the whole trust.
  std::string tried;
  for (const Signer& signer : signers) {
    const auto* key = std::get_if<SigningKey>(&signer.who);
    if (key == nullptr) continue;
    sigstore::VerifyOptions options;
    options.public_key_pem = key->pem;
    options.allow_no_tlog_for_keys = true;
    auto verified = sigstore::verify(bundle, artifact, *root, options);
    if (verified) return std::optional<sigstore::Signer>(std::move(verified->signer));
    tried += std::string(tried.empty() ? "" : "; ") + "the key of " + signer.origin + ": " + verified.error().message;
  }
  if (tried.empty()) return std::optional<sigstore::Signer>();
  return unexpected(ErrorCode::kBadSignature,
                    "it was signed with a managed key, and no key configured for it verifies it (" + tried +
                        "): either metadata.json was altered or another key signed it");
}

// A variant without a bundle may carry kernelhub's own Ed25519 kernelhub.sig (layout v1 or v2).
Result<SignatureVerdict> check_legacy_signature(const fs::path& dir, std::string_view repo, std::string_view variant,
                                                std::string_view revision, const SignatureSettings& settings,
                                                FileDigests* digests, SignatureVerdict verdict) {
  std::error_code ec;
  const bool present =
      fs::exists(signing::signature_path(dir), ec) || fs::exists(signing::legacy_signature_path(dir), ec);
  if (!present || settings.legacy_keys.for_repo(repo).empty()) return verdict;
  signing::VerifyPolicy policy{settings.legacy_keys, false, settings.serial_store_dir};
  KH_ASSIGN_OR_RETURN(
      signing::VerifiedVariant verified,
      signing::verify_variant(dir,
                              signing::ExpectedVariant::for_revision(std::string(repo), revision, std::string(variant)),
                              policy, digests));
  verdict.status = SignatureVerdict::Status::kAccepted;
  verdict.signer = "kernelhub.sig key " + verified.key_id + " (trusted for " + verified.key_scope + ")";
  return verdict;
}

}  // namespace

std::optional<sigstore::Signer> VerifiedSignatures::find(const std::string& key) const {
  std::lock_guard lock(mutex_);
  const auto it = signers_.find(key);
  return it == signers_.end() ? std::nullopt : std::optional(it->second);
}

void VerifiedSignatures::keep(const std::string& key, const sigstore::Signer& signer) {
  std::lock_guard lock(mutex_);
  signers_.insert_or_assign(key, signer);
}

namespace {

// A certificate identity's optional fields, by the name a record keeps each under.
using IdentityField = std::optional<std::string> sigstore::CertificateIdentity::*;
constexpr std::array<std::pair<const char*, IdentityField>, 7> kIdentityFields = {{
    {"issuer_v1", &sigstore::CertificateIdentity::issuer_v1},
    {"issuer_v2", &sigstore::CertificateIdentity::issuer_v2},
    {"build_signer_uri", &sigstore::CertificateIdentity::build_signer_uri},
    {"build_signer_digest", &sigstore::CertificateIdentity::build_signer_digest},
    {"source_repository_uri", &sigstore::CertificateIdentity::source_repository_uri},
    {"source_repository_digest", &sigstore::CertificateIdentity::source_repository_digest},
    {"source_repository_ref", &sigstore::CertificateIdentity::source_repository_ref},
}};

// A certificate identity's fields as a record keeps them (the certificate itself is kept beside).
nlohmann::json identity_json(const sigstore::CertificateIdentity& identity) {
  nlohmann::json out = {{"subject_alternative_names", identity.subject_alternative_names}};
  for (const auto& [name, field] : kIdentityFields) {
    // Raw extension bytes: base64, as the certificate.
    if (const auto& value = identity.*field) out[name] = base64_encode(*value);
  }
  return out;
}

// The identity back from a record; nullopt where the record has none or it is not well formed.
std::optional<sigstore::CertificateIdentity> identity_of(const nlohmann::json& doc) {
  const auto found = doc.find("identity");
  if (found == doc.end() || !found->is_object()) return std::nullopt;
  const nlohmann::json& fields = *found;
  sigstore::CertificateIdentity identity;
  const auto names = fields.find("subject_alternative_names");
  if (names == fields.end() || !names->is_array()) return std::nullopt;
  for (const auto& name : *names) {
    if (!name.is_string()) return std::nullopt;
    identity.subject_alternative_names.push_back(name.get<std::string>());
  }
  for (const auto& [name, field] : kIdentityFields) {
    const auto value = fields.find(name);
    if (value == fields.end()) continue;
    auto bytes = value->is_string() ? base64_decode(value->get<std::string>()) : std::nullopt;
    if (!bytes) return std::nullopt;
    identity.*field = std::move(*bytes);
  }
  return identity;  // its certificate_der is the caller's to set
}

}  // namespace

SignatureRecords::SignatureRecords(std::optional<fs::path> state_dir, VerifiedSignatures* in_memory)
    : in_memory_(in_memory) {
  if (state_dir) dir_ = *state_dir / "signatures";
}

std::string SignatureRecords::key_of(const Sha256Digest& bundle, const Sha256Digest& metadata,
                                     std::string_view root_id) {
  return to_hex(sha256(to_hex(bundle) + "\n" + to_hex(metadata) + "\n" + std::string(root_id)));
}

std::optional<sigstore::Signer> SignatureRecords::find(const std::string& key) const {
  if (in_memory_ != nullptr) {
    if (auto signer = in_memory_->find(key)) return signer;
  }
  if (!dir_) return std::nullopt;
  auto text = read_file(*dir_ / (key + ".json"));
  if (!text || text->size() > (64u << 10) || !json_nesting_within(*text, 4)) return std::nullopt;
  const auto doc = nlohmann::json::parse(*text, nullptr, false);
  if (!doc.is_object() || doc.value("key", "") != key) return std::nullopt;
  const auto decode = [&](const char* field) -> std::optional<std::string> {
    if (!doc.contains(field) || !doc[field].is_string()) return std::nullopt;
    auto bytes = base64_decode(doc[field].get<std::string>());
    if (!bytes) return std::nullopt;
    return std::string(bytes->begin(), bytes->end());
  };
  std::optional<sigstore::Signer> signer;
  if (auto der = decode("certificate")) {
    // The identity as recorded when the bundle verified: no certificate parsed (and no OpenSSL
    // started) on a warm load. A record without it is read from the certificate.
    if (auto identity = identity_of(doc)) {
      identity->certificate_der = std::move(*der);
      signer = sigstore::Signer{std::move(*identity)};
    } else if (auto read = sigstore::Signer::from_certificate_der(*der)) {
      signer = std::move(*read);
    }
  } else if (auto key = decode("public_key")) {
    signer = sigstore::Signer{sigstore::KeyIdentity{*key, to_hex(sha256(*key))}};
  }
  if (signer && in_memory_ != nullptr) in_memory_->keep(key, *signer);
  return signer;
}

void SignatureRecords::keep(const std::string& key, const sigstore::Signer& signer) const {
  if (in_memory_ != nullptr) in_memory_->keep(key, signer);
  if (!dir_) return;
  nlohmann::json doc = {{"key", key}};
  if (const auto* certificate = std::get_if<sigstore::CertificateIdentity>(&signer.identity)) {
    doc["certificate"] = base64_encode(certificate->certificate_der);
    doc["identity"] = identity_json(*certificate);
  } else {
    doc["public_key"] = base64_encode(std::get<sigstore::KeyIdentity>(signer.identity).public_key_der);
  }
  if (!state_subdir(dir_->parent_path(), dir_->filename().string())) return;
  (void)write_file_atomic(*dir_ / (key + ".json"), doc.dump() + "\n", {.mode = 0600});
}

Result<std::shared_ptr<const sigstore::TrustedRoot>> SignatureSettings::root() const {
  if (*parsed_) return *parsed_;
  if (root_text_.empty()) {
    *parsed_ = std::shared_ptr<const sigstore::TrustedRoot>(&sigstore::TrustedRoot::public_good(),
                                                            [](const sigstore::TrustedRoot*) {});
    return *parsed_;
  }
  auto root = sigstore::TrustedRoot::parse(root_text_, root_source_);
  if (!root) {
    return unexpected(root.error().with_context("the Sigstore trusted root " +
                                                std::string(env_vars::kKernelhubSigstoreTrustedRoot) + " names"));
  }
  *parsed_ = std::make_shared<const sigstore::TrustedRoot>(std::move(*root));
  return *parsed_;
}

Result<SignatureSettings> SignatureSettings::from_environment(const EnvironmentSource& env, bool require) {
  SignatureSettings settings;
  settings.root_id = "public-good";
  if (auto named = env(env_vars::kKernelhubSigstoreTrustedRoot)) {
    auto text = read_file(*named);
    if (!text) {
      return unexpected(text.error().with_context("the Sigstore trusted root " +
                                                  std::string(env_vars::kKernelhubSigstoreTrustedRoot) + " names"));
    }
    if (text->empty()) {
      return unexpected(ErrorCode::kCorruptFile, "the Sigstore trusted root `" + *named + "` (" +
                                                     std::string(env_vars::kKernelhubSigstoreTrustedRoot) +
                                                     ") is empty");
    }
    settings.root_id = to_hex(sha256(*text));
    settings.root_text_ = std::move(*text);
    settings.root_source_ = *named;
  }
  KH_ASSIGN_OR_RETURN(settings.legacy_keys, signing::TrustedKeys::from_environment(env));
  KH_ASSIGN_OR_RETURN(settings.signers, Signers::from_environment(env, settings.legacy_keys));
  settings.serial_store_dir = signing::SerialStore::default_dir(env);
  settings.require_signature = require || is_truthy(env(env_vars::kKernelhubRequireSignature));
  return settings;
}

Result<SignatureVerdict> check_signature(const fs::path& dir, std::string_view repo, std::string_view variant,
                                         std::string_view revision, const SignatureSettings& settings,
                                         const SignatureRecords& records, FileDigests* digests) {
  const std::vector<Signer> signers = settings.signers.for_repo(repo);
  SignatureVerdict verdict;
  verdict.configured = !signers.empty();
  verdict.required = verdict.configured || settings.require_signature;
  const fs::path bundle_path = dir / kSigstoreBundleName;
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(bundle_path, ec))) {
    return check_legacy_signature(dir, repo, variant, revision, settings, digests, std::move(verdict));
  }
  const auto failed = [&](SignatureVerdict::Status status, std::string why) {
    verdict.status = status;
    verdict.why_not = std::move(why);
    return verdict;
  };
  if (!fs::exists(dir / "metadata.json", ec)) return failed(SignatureVerdict::Status::kMetadataMissing, "");

  // The bundle and metadata.json, proven by this load's hashes where it has them.
  KH_ASSIGN_OR_RETURN(const Sha256Digest bundle_sha, sha256_file(bundle_path, digests));
  KH_ASSIGN_OR_RETURN(const Sha256Digest metadata_sha, sha256_file(dir / "metadata.json", digests));
  const std::string record_key = SignatureRecords::key_of(bundle_sha, metadata_sha, settings.root_id);
  std::optional<sigstore::Signer> signer = records.find(record_key);
  verdict.from_record = signer.has_value();
  if (!signer) {
    auto bundle_text = read_bundle(bundle_path);
    if (!bundle_text) {
      if (bundle_text.error().code == ErrorCode::kIo) return unexpected(bundle_text.error());
      return failed(SignatureVerdict::Status::kMalformed, bundle_text.error().message);
    }
    KH_ASSIGN_OR_RETURN(const std::string metadata, read_file(dir / "metadata.json"));
    // The bytes verified are the bytes hashed: a file changed in between is caught here.
    if (sha256(*bundle_text) != bundle_sha || sha256(metadata) != metadata_sha) {
      return unexpected(ErrorCode::kIntegrityMismatch, where_of(repo, variant) +
                                                           ": metadata.json or its bundle changed while it was "
                                                           "verified; load it again");
    }
    auto bundle = sigstore::Bundle::parse(*bundle_text);
    if (!bundle) return failed(SignatureVerdict::Status::kMalformed, bundle.error().message);
    KH_RETURN_IF_ERROR(settings.root());  // a root that does not parse is the configuration's error
    auto verified = verify_bundle(*bundle, metadata, signers, settings);
    if (!verified) {
      if (verified.error().code == ErrorCode::kIo) return unexpected(verified.error());
      return failed(SignatureVerdict::Status::kDoesNotVerify, verified.error().message);
    }
    if (!*verified) {
      return failed(SignatureVerdict::Status::kNotAccepted,
                    "it is signed with a managed key (hint " + bundle->public_key_hint.value_or("none") +
                        ") and no key is configured for `" + std::string(repo) + "` or its org");
    }
    signer = std::move(**verified);
    records.keep(record_key, *signer);
  }
  verdict.signer = signer->describe();
  KH_ASSIGN_OR_RETURN(
      const sigstore::Policy policy,
      verdict.configured ? policy_of(signers) : Result<sigstore::Policy>(sigstore::Policy::kernels_default()));
  if (auto accepted = sigstore::check_policy(policy, *signer); !accepted) {
    verdict.status = SignatureVerdict::Status::kNotAccepted;
    if (policy.kind() == sigstore::Policy::Kind::kAnyOf) verdict.policy_alternatives = policy.alternatives().size();
    verdict.why_not = accepted.error().message;
    return verdict;
  }
  verdict.status = SignatureVerdict::Status::kAccepted;
  return verdict;
}

Status refuse_unless_accepted(const SignatureVerdict& verdict, std::string_view repo, std::string_view variant) {
  using Status = SignatureVerdict::Status;
  const std::string where = where_of(repo, variant);
  const std::string bundle = "`" + std::string(kSigstoreBundleName) + "`";
  const auto refused = [&](ErrorCode code, std::string message, std::string why_required = {}) {
    return unexpected(
        problem_error(code, std::move(message),
                      SignatureRefused{verdict, std::string(repo), std::string(variant), std::move(why_required)}));
  };
  switch (verdict.status) {
    case Status::kAccepted: return {};
    case Status::kMalformed:
      return refused(ErrorCode::kBadSignature, where + ": its signature bundle " + bundle +
                                                   " is not a Sigstore bundle: " + verdict.why_not +
                                                   ". Do not load it; if the publisher signs with a newer bundle "
                                                   "format, upgrade kernelhub");
    case Status::kDoesNotVerify:
      return refused(ErrorCode::kBadSignature, where + ": its signature bundle " + bundle +
                                                   " does not verify: " + verdict.why_not +
                                                   ". The variant may have been tampered with; do not load it");
    case Status::kMetadataMissing:
      return refused(ErrorCode::kCorruptFile, where +
                                                  " has a signature bundle and no metadata.json: the metadata is "
                                                  "missing, so its integrity cannot be verified");
    case Status::kUnsigned:
    case Status::kNotAccepted: break;
  }
  if (!verdict.required) return {};
  const std::string org(repo.substr(0, repo.find('/')));
  std::string why_required = verdict.configured
                                 ? "signers are configured for `" + std::string(repo) + "` or `" + org +
                                       "` (the signers file, " + std::string(env_vars::kKernelhubSigners) + ", " +
                                       std::string(env_vars::kKernelhubTrustedKeys) + ")"
                                 : std::string("a signature is required (require_signature, --require-signature, ") +
                                       std::string(env_vars::kKernelhubRequireSignature) + ")";
  if (verdict.status == Status::kUnsigned) {
    return refused(ErrorCode::kMissingSignature,
                   where + " is not signed (no " + bundle + "), and " + why_required +
                       ". The signature was stripped or the publisher does not sign this build; do not load it, "
                       "or ask the publisher to sign it (docs/SIGNING.md)",
                   why_required);
  }
  return refused(ErrorCode::kUntrustedPublisher,
                 where + " is signed" + (verdict.signer.empty() ? std::string() : " by " + verdict.signer) +
                     ", which is not a signer accepted for it: " + verdict.why_not + ". " + why_required +
                     "; if this signer is the publisher's, add it to the signers file (docs/SIGNING.md)",
                 why_required);
}

std::optional<Warning> signature_warning(const SignatureVerdict& verdict, const Metadata& metadata,
                                         std::string_view repo, std::string_view variant) {
  using Status = SignatureVerdict::Status;
  if (verdict.status != Status::kUnsigned && verdict.status != Status::kNotAccepted) {
    return std::nullopt;  // accepted, or refused (never warned about)
  }
  const std::string where = where_of(repo, variant);
  std::string message =
      verdict.status == Status::kUnsigned
          ? where + " is not signed (no `" + std::string(kSigstoreBundleName) +
                "`), so who built it cannot be verified; loading it anyway (--require-signature or " +
                std::string(env_vars::kKernelhubRequireSignature) + "=1 refuses it)"
          : where + " is signed" + (verdict.signer.empty() ? std::string() : " by " + verdict.signer) +
                ", which no configured signer (or the kernels package's default policy) accepts for it: " +
                verdict.why_not +
                "; loading it anyway (--require-signature refuses it; docs/SIGNING.md says how to accept a signer)";
  return problem_warning(std::move(message),
                         SignatureNotAccepted{verdict, metadata.name, std::string(repo), std::string(variant)});
}

}  // namespace kernelhub
