// The signature file of a variant (docs/SIGNING.md).
//
//   kernelhub-signature v1 <key id: 16 hex> <base64 of the 64-byte Ed25519 signature>\n
//   <the manifest's bytes, exactly as signed (manifest.hpp)>
//
// One file, so the signed bytes travel with their signature. The first line is read with a fixed,
// bounded grammar; the manifest is not parsed until its signature has verified.
//
// Note [Signature location]: the file has two layouts, by version. Layout v2 puts it beside the
// variant folder, `build/<variant>.kernelhub.sig`; layout v1 put it inside, `<variant>/kernelhub.sig`.
// kernels >= 0.18 checks every file inside `build/<variant>/` against metadata.json's digest at
// load and refuses one it does not know; only metadata.json, metadata.json.sigstore and
// __pycache__ are skipped, and those names are metadata.json's own and Python's. Beside the folder,
// kernels never sees it: a Hub client lists variants as the folders of build/ and downloads one as
// `build/<variant>/*`. It stays bound to the exact bytes by what it signs (the repo, the variant's
// name, its version and every file inside the folder), not by where it is; `kernels download` and
// `install_kernel` (build/*) still carry it along. Layout v1 left the file out of the files it
// covers; a v1 signature is still read when there is no v2 one, so old signed repos keep verifying.
// History: kernelhub wrote layout v1 until 2026-12-04 and layout v2 until 2026-12-06; since then it
// writes Sigstore bundles and only verifies this format (docs/SIGNING.md).
//
// Thread safety: value type; free functions on paths.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "kernelhub/base/result.hpp"

namespace kernelhub::signing {

inline constexpr std::string_view kSignatureSuffix = ".kernelhub.sig";
inline constexpr std::string_view kV1SignatureFileName = "kernelhub.sig";
inline constexpr std::string_view kSignatureTag = "kernelhub-signature v1";

// Where the file sits (Note [Signature location]).
enum class SignatureLayout {
  kV1Inside,  // `<variant>/kernelhub.sig`: covers every file inside but itself
  kV2Beside,  // `<variant>.kernelhub.sig` beside the folder: covers every file inside it
};

// Layout v2: `<parent>/<variant>.kernelhub.sig` for the variant folder `variant_dir` (a trailing `/`
// allowed).
std::filesystem::path signature_path(const std::filesystem::path& variant_dir);
// Layout v1: `<variant_dir>/kernelhub.sig`.
std::filesystem::path legacy_signature_path(const std::filesystem::path& variant_dir);
// Where layout v2 published it in a repo: `build/<variant>.kernelhub.sig`.
std::string signature_repo_path(std::string_view variant);

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
