// The signature file of a variant: `<variant>/kernelhub.sig` (docs/SIGNING.md).
//
//   kernelhub-signature v1 <key id: 16 hex> <base64 of the 64-byte Ed25519 signature>\n
//   <the manifest's bytes, exactly as signed (manifest.hpp)>
//
// One file, so a variant directory gains one name and the signed bytes travel with their
// signature. The first line is read with a fixed, bounded grammar; the manifest is not parsed
// until its signature has verified. The file is excluded from the manifest it carries and from
// metadata.json `digest`.
//
// Thread safety: value type.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "kernelhub/base/result.hpp"

namespace kernelhub::signing {

inline constexpr std::string_view kSignatureFileName = "kernelhub.sig";
inline constexpr std::string_view kSignatureTag = "kernelhub-signature v1";

struct SignatureFile {
  std::string key_id;          // 16 lower-case hex: which key signed (a hint, not an authority)
  std::string signature;       // 64 raw bytes
  std::string manifest_bytes;  // what `signature` signs

  std::string to_bytes() const;
  // Splits the first line off and checks its grammar; the manifest bytes are left unparsed.
  // Errors: kBadSignature (a malformed signature file).
  static Result<SignatureFile> parse(std::string_view bytes);
};

}  // namespace kernelhub::signing
