// Rekor v1's inclusion promise, the signed entry timestamp (SET): the log's signature over the
// RFC 8785 canonical JSON of
//   {"body": <base64 of the entry body>, "integratedTime": <int>, "logID": <hex log id>,
//    "logIndex": <int>}
// which binds the entry's integrated time, the time a verifier may then trust.
//
// Thread safety: pure functions.
#pragma once

#include <string>

#include "kernelhub/base/result.hpp"
#include "kernelhub/sigstore/bundle.hpp"
#include "kernelhub/sigstore/internal/trusted_material.hpp"

namespace kernelhub::sigstore {

// The canonical JSON the SET signs. REQUIRES: entry.integrated_time.
std::string signed_entry_timestamp_payload(const TransparencyLogEntry& entry);

// Verifies the entry's SET with `log`'s key, and that the key was valid at the integrated time.
// REQUIRES: entry.signed_entry_timestamp and entry.integrated_time. Errors: kBadSignature.
Status verify_signed_entry_timestamp(const TransparencyLogEntry& entry, const LogKey& log);

}  // namespace kernelhub::sigstore
