// RFC 3161 signed timestamps from a timestamp authority (TSA) of the trusted root: proof that a
// signature existed at a time, what a Rekor v2 bundle (which has no integrated time) rests on.
//
// A timestamp verifies when its TimeStampResp is granted, its message imprint is the SHA-2 of the
// signed bytes (the bundle's signature), its CMS signature is by a certificate the TSA's entry in
// the root lists (embedded in the response or not), that certificate chains to the entry's anchor
// as things were at the timestamp's time (genTime) with the timeStamping extended key usage, and
// genTime lies within the period the root trusts the TSA for (closed).
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kernelhub/base/result.hpp"
#include "kernelhub/sigstore/internal/trusted_material.hpp"
#include "kernelhub/sigstore/time.hpp"

namespace kernelhub::sigstore {

struct VerifiedTimestamp {
  Instant time;
  std::string authority;  // the TSA's URI in the root
};

// Verifies `response` (DER TimeStampResp) over `signed_bytes` against each TSA of `authorities`
// until one accepts it. Errors: kCorruptFile (not a TimeStampResp); kBadSignature saying why each
// TSA refused it (none listed, another message, not signed by it, outside its period).
Result<VerifiedTimestamp> verify_timestamp(std::string_view response, std::string_view signed_bytes,
                                           const std::vector<Authority>& authorities);

}  // namespace kernelhub::sigstore
