// Certificate paths: a certificate that chains to a certificate authority of a trusted root, as
// things were at one instant (the "hybrid model" Sigstore's client spec asks for: every
// certificate of the path valid at the signature's verified time, not now).
//
// Thread safety: a pure function (OpenSSL objects are created per call).
#pragma once

#include <vector>

#include "kernelhub/base/result.hpp"
#include "kernelhub/sigstore/certificate.hpp"
#include "kernelhub/sigstore/time.hpp"

namespace kernelhub::sigstore {

// Verifies that `leaf` is issued, through `authority` (certificates leaf-most first; the last
// one is the trust anchor, self-signed or not), by that anchor: every signature, every issuer a
// CA within its path length, no unknown critical extension, and every certificate of the path
// valid at `at` (closed intervals). Returns the path above the leaf (its issuer first).
// Errors: kBadSignature saying which check failed.
Result<std::vector<Certificate>> verify_chain(const Certificate& leaf, const std::vector<Certificate>& authority,
                                              Instant at);

}  // namespace kernelhub::sigstore
