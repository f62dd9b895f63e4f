// Signed certificate timestamps (RFC 6962) embedded in a Fulcio certificate (extension
// 1.3.6.1.4.1.11129.2.4.2): a CT log's promise that it logged the certificate's precertificate.
//
// The log signed the precertificate's TBSCertificate, which is the certificate's own with the SCT
// list extension removed, together with the SHA-256 of the issuer's SubjectPublicKeyInfo
// (section 3.2). SCT extensions (Static CT's leaf index) are part of what is signed.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kernelhub/base/result.hpp"
#include "kernelhub/sigstore/internal/certificate.hpp"
#include "kernelhub/sigstore/internal/trusted_material.hpp"

namespace kernelhub::sigstore {

struct SignedCertificateTimestamp {
  std::string log_id;  // 32 bytes
  std::uint64_t timestamp_ms = 0;
  std::string extensions;
  std::uint8_t hash_algorithm = 0;       // TLS HashAlgorithm: 4 = sha256
  std::uint8_t signature_algorithm = 0;  // TLS SignatureAlgorithm: 1 = rsa, 3 = ecdsa
  std::string signature;
};

// Parses a SignedCertificateTimestampList (the extension's value: a DER OCTET STRING around the
// TLS encoding). Errors: kCorruptFile.
Result<std::vector<SignedCertificateTimestamp>> parse_sct_list(std::string_view extension_value);

// Verifies that at least one SCT embedded in `leaf` is signed by a CT log of `ct_logs` that the
// root trusted at the SCT's time. `issuer_path` is the leaf's verified path above it (issuer
// first); a precertificate-signing certificate there is skipped for the issuer, as RFC 6962 says.
// Errors: kBadSignature naming each SCT's failure (none embedded, unknown log, bad signature).
Status verify_embedded_scts(const Certificate& leaf, const std::vector<Certificate>& issuer_path,
                            const std::vector<LogKey>& ct_logs);

}  // namespace kernelhub::sigstore
