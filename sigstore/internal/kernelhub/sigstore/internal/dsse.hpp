// DSSE (Dead Simple Signing Envelope, secure-systems-lab/dsse v1.0): the bytes an envelope's
// signature covers, and the in-toto statement a Sigstore attestation carries as its payload.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kernelhub/base/result.hpp"

namespace kernelhub::sigstore {

inline constexpr std::string_view kInTotoPayloadType = "application/vnd.in-toto+json";

// PAE(type, body) = "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body, lengths in decimal.
std::string pre_authentication_encoding(std::string_view payload_type, std::string_view payload);

struct InTotoSubject {
  std::string name;
  std::string sha256;  // lower-case hex, as the statement writes it; empty when it gives none
};

// The subjects of an in-toto statement (`_type` https://in-toto.io/Statement/v0.1 or v1).
// Errors: kCorruptFile (not JSON, nested too deep, not a statement, a subject without digests).
Result<std::vector<InTotoSubject>> in_toto_subjects(std::string_view statement);

}  // namespace kernelhub::sigstore
