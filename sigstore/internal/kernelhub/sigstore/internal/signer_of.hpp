// The Signer (signer.hpp) of a certificate or a managed key.
#pragma once

#include "kernelhub/base/result.hpp"
#include "kernelhub/sigstore/internal/certificate.hpp"
#include "kernelhub/sigstore/internal/verification_key.hpp"
#include "kernelhub/sigstore/signer.hpp"

namespace kernelhub::sigstore {

// Errors: kBadSignature (a Fulcio extension that is not a DER UTF8String).
Result<Signer> signer_of(const Certificate& certificate);
Signer signer_of(const VerificationKey& key);

}  // namespace kernelhub::sigstore
