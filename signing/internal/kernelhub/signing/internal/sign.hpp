// Signing a variant directory: hash its files, write the manifest, sign it, and store both in
// `<variant>.kernelhub.sig` beside the directory (signature_file.hpp, Note [Signature location]).
// Used by `kernelhub sign` and hub-publish, after metadata.json is final (it is one of the signed
// files) and before upload.
//
// Thread safety: free functions; one signer per directory at a time (the write itself is atomic).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>

#include "kernelhub/base/result.hpp"
#include "kernelhub/signing/internal/keys.hpp"
#include "kernelhub/signing/internal/manifest.hpp"

namespace kernelhub::signing {

struct SignOptions {
  std::optional<std::uint64_t> serial;  // default: the current Unix time in seconds
};

// Writes signature_path(dir) (temp file + rename, replacing an older one) and returns the
// manifest it signed. A layout v1 `<dir>/kernelhub.sig` is removed first: it is this tool's own
// earlier output, and kernels >= 0.18 refuses a folder holding it. Nothing is written when a file
// cannot be covered: errors list every symlink, device or unsafe name.
// Errors: kInvalidArgument (identity or files), kNotFound, kIo.
Result<Manifest> sign_variant(const std::filesystem::path& dir, const VariantIdentity& identity, const PrivateKey& key,
                              const SignOptions& options = {});

}  // namespace kernelhub::signing
