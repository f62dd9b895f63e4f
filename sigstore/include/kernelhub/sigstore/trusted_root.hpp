// TrustedRoot: what a Sigstore verifier trusts, as protobuf-specs' `TrustedRoot` message states it
// (`trusted_root.json`, media type `application/vnd.dev.sigstore.trustedroot+json;version=0.1`):
// the Fulcio certificate authorities that issue signing certificates, the Rekor transparency logs,
// the certificate-transparency logs whose SCTs Fulcio embeds, and the RFC 3161 timestamp
// authorities, each with the period it is trusted for.
//
// The library embeds two (sigstore/data/README.md says where they come from and when):
// public_good() is Sigstore's public-good production instance, the one the Hugging Face kernels
// are signed against; staging() is its staging instance. A newer or private root is read from a
// file (`--trusted-root`, KERNELHUB_SIGSTORE_TRUSTED_ROOT). Nothing here touches the network.
//
// Thread safety: a TrustedRoot is immutable once parsed; copies share their parsed keys and
// certificates, and any number of threads may verify against one at once.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernelhub/base/environment_source.hpp"
#include "kernelhub/base/result.hpp"
#include "kernelhub/sigstore/time.hpp"

namespace kernelhub::sigstore {

struct TrustedMaterial;  // the parsed keys and certificates (internal)

// A Rekor log or a CT log.
struct TransparencyLogInstance {
  std::string base_url;        // "https://rekor.sigstore.dev"
  std::string hash_algorithm;  // "SHA2_256" (the only one accepted)
  std::string key_details;     // "PKIX_ECDSA_P256_SHA_256", "PKIX_ED25519", "PKCS1_RSA_PKCS1V5", ...
  std::string public_key;      // DER, as `publicKey.rawBytes` holds it
  std::string log_id;          // `logId.keyId`: the id entries and SCTs name the log by (raw bytes)
  ValidityPeriod valid_for;
  // False for a key of a kind this library cannot use (kept, and named in describe(); nothing
  // verifies with it).
  bool key_usable = true;
};

// A Fulcio certificate authority or an RFC 3161 timestamp authority.
struct CertificateAuthorityInstance {
  std::string subject;  // "organization/commonName", from the root's `subject`
  std::string uri;
  std::vector<std::string> certificates;  // DER, leaf-most first, the anchor last
  ValidityPeriod valid_for;
};

class TrustedRoot {
 public:
  // Parses a `trusted_root.json`. `source` says where it came from (describe() prints it).
  // Errors: kCorruptFile naming the field: not JSON or nested too deep, an unknown media type, a
  // missing or mistyped field, base64 or DER that does not decode, a log whose hash is not SHA2_256,
  // any entry without `validFor.start` (an open start would trust a key before it existed).
  static Result<TrustedRoot> parse(std::string_view json, std::string source = "a trusted root given as text");
  // Reads and parses a file. Errors: kNotFound, kIo, and parse()'s (naming the file).
  static Result<TrustedRoot> read(const std::filesystem::path& path);

  // The root in force for a process: the file KERNELHUB_SIGSTORE_TRUSTED_ROOT names, else
  // public_good(). Touches disk only for the variable's file. Errors: read()'s.
  static Result<TrustedRoot> from_environment(const EnvironmentSource& env);

  // The embedded roots, parsed on first use (thread-safe).
  static const TrustedRoot& public_good();
  static const TrustedRoot& staging();

  const std::string& source() const;
  const std::vector<CertificateAuthorityInstance>& certificate_authorities() const;
  const std::vector<TransparencyLogInstance>& transparency_logs() const;
  const std::vector<TransparencyLogInstance>& ct_logs() const;
  const std::vector<CertificateAuthorityInstance>& timestamp_authorities() const;

  // A few lines for people: the source, then each CA, log, CT log and TSA with its validity.
  std::string describe() const;

 private:
  friend const TrustedMaterial& trusted_material(const TrustedRoot& root);
  explicit TrustedRoot(std::shared_ptr<const TrustedMaterial> material) : material_(std::move(material)) {}
  std::shared_ptr<const TrustedMaterial> material_;
};

}  // namespace kernelhub::sigstore
