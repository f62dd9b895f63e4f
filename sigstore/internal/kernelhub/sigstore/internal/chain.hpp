// Certificate paths: a certificate that chains to a certificate authority of a trusted root, as
// things were at one instant (the "hybrid model" Sigstore's client spec asks for: every
// certificate of the path valid at the signature's verified time, not now).
//
// Thread safety: a pure function (OpenSSL objects are created per call).
#pragma once

#include <vector>

#include "kernelhub/base/result.hpp"
#include "kernelhub/sigstore/internal/certificate.hpp"
#include "kernelhub/sigstore/time.hpp"

namespace kernelhub::sigstore {

// Verifies that `leaf` is issued by a certificate of `authority` (a trusted root's certificate
// authority: its certificates leaf-most first, every one of them trusted as the root lists it):
// the leaf's signature, every issuer a CA within its path length, no unknown critical extension,
// and the leaf and every certificate of the authority valid at `at` (closed intervals). Returns
// the path above the leaf (its issuer first, then the rest of the authority).
// Errors: kBadSignature saying which check failed.
Result<std::vector<Certificate>> verify_chain(const Certificate& leaf, const std::vector<Certificate>& authority,
                                              Instant at);

}  // namespace kernelhub::sigstore
