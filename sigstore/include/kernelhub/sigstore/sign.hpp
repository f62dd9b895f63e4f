// Signing with a managed key, for publishers without Fulcio: what `cosign sign-blob --key K
// --tlog-upload=false --bundle B` writes. The bundle (media type
// `application/vnd.dev.sigstore.bundle.v0.3+json`) holds a messageSignature (the artifact's digest
// and the signature) and `verificationMaterial.publicKey.hint` (base64 of the SHA-256 of the key's
// DER SubjectPublicKeyInfo, as cosign writes it), and no transparency log entry: verify() accepts
// it only with the public key and VerifyOptions::allow_no_tlog_for_keys.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "kernelhub/base/result.hpp"

struct evp_pkey_st;  // OpenSSL's EVP_PKEY

namespace kernelhub::sigstore {

// Signs `artifact` with `private_key_pem` (PEM `PRIVATE KEY` (PKCS#8) or `EC PRIVATE KEY`; ECDSA
// P-256, P-384 or P-521 over SHA-256/384/512 by curve, or Ed25519 over the bytes themselves).
// Cosign's encrypted key format is not read: export the key as PKCS#8 first. Returns the bundle's
// JSON. Errors: kInvalidArgument (not such a key).
Result<std::string> sign_with_key(std::string_view private_key_pem, std::string_view artifact);
// The same with a key already loaded (the caller keeps ownership).
Result<std::string> sign_with_key(evp_pkey_st* private_key, std::string_view artifact);

}  // namespace kernelhub::sigstore
