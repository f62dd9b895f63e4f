// The parsed contents of a TrustedRoot: its public description beside the OpenSSL keys and
// certificates verification uses, built once per root.
//
// Thread safety: immutable once built.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kernelhub/sigstore/internal/certificate.hpp"
#include "kernelhub/sigstore/internal/verification_key.hpp"
#include "kernelhub/sigstore/trusted_root.hpp"

namespace kernelhub::sigstore {

struct LogKey {
  TransparencyLogInstance instance;
  std::optional<VerificationKey> key;  // none: a key kind this library cannot use
};

struct Authority {
  CertificateAuthorityInstance instance;
  std::vector<Certificate> certificates;  // leaf-most first
};

struct TrustedMaterial {
  std::string source;
  std::vector<Authority> certificate_authorities;
  std::vector<LogKey> transparency_logs;
  std::vector<LogKey> ct_logs;
  std::vector<Authority> timestamp_authorities;
  // The public views, kept beside the parsed objects so accessors can return references.
  std::vector<CertificateAuthorityInstance> ca_instances;
  std::vector<TransparencyLogInstance> tlog_instances;
  std::vector<TransparencyLogInstance> ctlog_instances;
  std::vector<CertificateAuthorityInstance> tsa_instances;
};

const TrustedMaterial& trusted_material(const TrustedRoot& root);

// The log among `logs` whose id is `log_id`; null if none.
const LogKey* find_log(const std::vector<LogKey>& logs, std::string_view log_id);

}  // namespace kernelhub::sigstore
