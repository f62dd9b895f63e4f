// The sigstore layer's whole public API, for a caller that wants all of it (a specific header is
// the better include where one is enough):
//
//   TrustedRoot::public_good() / parse() / read()   what is trusted (trusted_root.hpp)
//   Bundle::parse()                                 a Sigstore bundle (bundle.hpp)
//   Artifact::bytes() / sha256()                    what it signs (artifact.hpp)
//   verify()                                        whether it is genuine (verify.hpp)
//   check_policy(), Policy::kernels_default()       whether its signer is trusted (policy.hpp)
//   sign_with_key()                                 a managed-key bundle (sign.hpp)
//
// A verifier of Sigstore bundles in C++ on OpenSSL 3, offline: no network, no TUF.
#pragma once

#include "kernelhub/sigstore/artifact.hpp"
#include "kernelhub/sigstore/bundle.hpp"
#include "kernelhub/sigstore/policy.hpp"
#include "kernelhub/sigstore/sign.hpp"
#include "kernelhub/sigstore/signer.hpp"
#include "kernelhub/sigstore/time.hpp"
#include "kernelhub/sigstore/trusted_root.hpp"
#include "kernelhub/sigstore/verify.hpp"
