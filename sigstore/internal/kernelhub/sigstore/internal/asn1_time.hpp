// ASN.1 times (X.509 validity, RFC 3161 genTime) as Instants.
//
// Thread safety: a pure function.
#pragma once

#include <openssl/asn1.h>

#include <optional>

#include "kernelhub/sigstore/time.hpp"

namespace kernelhub::sigstore {

// A UTCTime (`YYMMDDHHMMSSZ`, years 1950-2049) or GeneralizedTime (`YYYYMMDDHHMMSS[.f...]Z`,
// the fraction kept to the microsecond), in UTC as DER requires. nullopt for any other text.
std::optional<Instant> to_instant(const ASN1_TIME* time);

}  // namespace kernelhub::sigstore
