// verify(): whether a Sigstore bundle is a genuine signature over an artifact, offline, against a
// trusted root. The checks, in sigstore-python 4.5.1's order (sigstore/verify/verifier.py):
//
//  0. Verified times: each RFC 3161 timestamp (at most 32, none twice) by a TSA of the root over
//     the signature; the integrated time of a Rekor v1 entry whose inclusion promise (SET) the
//     log's key signs. At least one (a managed-key bundle allowed without a log entry has none).
//  1. The signing certificate chains to a Fulcio CA of the root valid at each verified time, every
//     certificate of the path valid then (closed intervals); a bundle whose chain carries a root
//     certificate is refused.
//  2. An SCT embedded in it verifies with a CT log key of the root (RFC 6962 precertificate).
//  3. keyUsage digitalSignature and extended key usage codeSigning. (The identity is the
//     caller's check_policy(), policy.hpp.)
//  4. The entry's inclusion proof (RFC 6962 audit path) leads to a root hash its checkpoint commits
//     to, signed by the log (a signed note of the log's origin, with its key hint).
//  5. The log's key was trusted at the verified times.
//  6. The signature verifies over the artifact (or its digest), or over the DSSE envelope's PAE,
//     with the certificate's key or the managed key.
//  7. The log entry records that signature, signer and digest (log_entry_body kinds: hashedrekord
//     0.0.1/0.0.2, dsse 0.0.1, intoto 0.0.2); for an in-toto statement, the artifact is one of its
//     subjects.
// Exactly one transparency log entry is read, as sigstore-python reads one.
//
// No network, no file: everything comes from the arguments.
//
// Thread safety: a pure function; any number of threads may verify against one TrustedRoot.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernelhub/base/result.hpp"
#include "kernelhub/sigstore/artifact.hpp"
#include "kernelhub/sigstore/bundle.hpp"
#include "kernelhub/sigstore/signer.hpp"
#include "kernelhub/sigstore/time.hpp"
#include "kernelhub/sigstore/trusted_root.hpp"

namespace kernelhub::sigstore {

struct VerifyOptions {
  // A managed key (PEM `PUBLIC KEY`): the bundle must be one it signed and carry no certificate
  // (`cosign sign-blob --key`). Without one, the bundle must carry a Fulcio certificate.
  std::optional<std::string> public_key_pem;
  // Accept a bundle signed with public_key_pem that no transparency log recorded (`cosign
  // sign-blob --key --tlog-upload=false`, sign_with_key()). The trade: nothing then proves when it
  // was signed or that the signing was published, so a stolen key's signatures cannot be told
  // from genuine ones by their log entries. Only for organisations without a Rekor. Default: off.
  bool allow_no_tlog_for_keys = false;
};

enum class TimeSource { kTransparencyLog, kTimestampAuthority };

struct VerifiedTime {
  TimeSource source;
  Instant time;
  std::string authority;  // the log's base URL or the TSA's URI
};

struct VerifiedLogEntry {
  std::string log_url;
  std::int64_t log_index = 0;
  std::string kind;     // "hashedrekord", "dsse", "intoto"
  std::string version;  // "0.0.1", "0.0.2"
};

struct VerifiedBundle {
  Signer signer;
  std::vector<VerifiedTime> times;            // empty only for a keyed bundle without a log entry
  std::optional<VerifiedLogEntry> log_entry;  // none only for a keyed bundle without a log entry
  BundleVersion version = BundleVersion::k0_3;
};

// Errors: kBadSignature saying which check failed and what it found (a certificate bundle given a
// managed key, or a keyed bundle given none, included); kCorruptFile for material in the bundle
// that does not decode (a certificate, a timestamp, a checkpoint, a log entry body);
// kInvalidArgument for a public_key_pem that is not a PEM public key.
Result<VerifiedBundle> verify(const Bundle& bundle, const Artifact& artifact, const TrustedRoot& root,
                              const VerifyOptions& options = {});

}  // namespace kernelhub::sigstore
