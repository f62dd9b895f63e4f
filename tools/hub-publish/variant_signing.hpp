// The signatures hub-publish publishes: each variant's Sigstore bundle, uploaded as
// `build/<variant>/metadata.json.sigstore`, the name the Hub's own kernels and the kernels
// package use (docs/SIGNING.md). A bundle signs metadata.json's exact bytes, whose digest covers
// every other file.
//
//   - A bundle in the folder (kernel-builder's CI signing with cosign, `kernelhub sign`) goes with
//     it, if it still signs the folder's metadata.json (check_bundles); a stale one would make the
//     variant fail to load.
//   - --sign-key KEY signs with the publisher's own key (a cosign-compatible keyed bundle, no
//     transparency log: sigstore/sign.hpp), staged outside the build folder, never written into
//     it. A bundle the branch already publishes that signs this metadata.json with this key is
//     kept, so publishing identical content makes no commit (an ECDSA signature differs each time).
//
// Thread safety: free functions; they touch disk.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "build_dir_check.hpp"
#include "kernelhub/base/environment_source.hpp"
#include "kernelhub/base/result.hpp"

namespace kernelhub::publish {

// The bundle the branch publishes now for a variant (its bytes), or nullopt (none, or unknown).
using PublishedBundle = std::function<std::optional<std::string>(const std::string& variant)>;

// Signs every variant's metadata.json with the private key at `key_path` (PEM: Ed25519, or ECDSA
// as cosign's `--key`) into `<staging>/<variant>/metadata.json.sigstore` and sets its `bundle`.
// Errors: kInvalidArgument when the key does not parse, kNotFound/kIo for the key file.
Status sign_variants(const std::filesystem::path& key_path, const std::filesystem::path& staging,
                     std::vector<VariantDir>& variants, const PublishedBundle& published = {});

// Without --sign-key: each bundle a variant carries must be a Sigstore bundle over its
// metadata.json as it will be published (not changed by a digest hub-publish adds), and a bundle
// with a certificate must verify against the trusted root (KERNELHUB_SIGSTORE_TRUSTED_ROOT, else
// the public-good one). A problem for each one that does not, in `problems`.
void check_bundles(const std::vector<VariantDir>& variants, const EnvironmentSource& env,
                   std::vector<std::string>& problems);

}  // namespace kernelhub::publish
