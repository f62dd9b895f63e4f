// Signing the variants before upload with signing/ (docs/SIGNING.md): each DIR/<variant>/ gets a
// `<variant>.kernelhub.sig` beside it, over its files and identity, uploaded as
// `build/<variant>.kernelhub.sig` (signing/signature_file.hpp, Note [Signature location]). A
// signature that already covers exactly these files and this identity with the same key is kept,
// the one beside the folder or else the one the branch already publishes (a zip layout is staged
// afresh on every run), so re-publishing identical content stays a no-op (a fresh signature would
// carry a new serial and make a new commit).
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "build_dir_check.hpp"
#include "kernelhub/base/result.hpp"
#include "kernelhub/client/repo_id.hpp"

namespace kernelhub::publish {

// The signature the branch publishes now for a variant (its bytes), or nullopt (none, or unknown).
using PublishedSignature = std::function<std::optional<std::string>(const std::string& variant)>;

// Signs every variant with the private key at `key_path` and sets its `signature`.
// `version` nullopt: published to a plain branch. Errors: kInvalidArgument when the key does not
// parse, kNotFound/kIo for the key file, and sign_variant's errors.
Status sign_variants(const std::filesystem::path& key_path, const client::RepoId& repo, std::optional<int> version,
                     std::vector<VariantDir>& variants, const PublishedSignature& published = {});

// Without --sign-key, a signature already beside a variant (`kernelhub sign`) is published with it
// only if it still signs this repo, version and variant over exactly its files now: a problem for
// each one that does not (it would be published stale), in `problems`.
void check_existing_signatures(const client::RepoId& repo, std::optional<int> version,
                               const std::vector<VariantDir>& variants, std::vector<std::string>& problems);

}  // namespace kernelhub::publish
