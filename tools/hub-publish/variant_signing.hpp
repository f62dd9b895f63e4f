// Signing the variants before upload with signing/ (docs/SIGNING.md): each DIR/<variant>/ gets a
// kernelhub.sig over its files and identity. A signature that already covers exactly these files
// and this identity with the same key is kept, so re-publishing identical content stays a no-op
// (a fresh signature would carry a new serial and make a new commit).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "build_dir_check.hpp"
#include "kernelhub/base/result.hpp"
#include "kernelhub/client/repo_id.hpp"

namespace kernelhub::publish {

// Signs every variant with the private key at `key_path` and adds kernelhub.sig to its files.
// `version` nullopt: published to a plain branch. Errors: kInvalidArgument when this build has no
// signing/ or the key does not parse, kNotFound/kIo for the key file, and sign_variant's errors.
Status sign_variants(const std::filesystem::path& key_path, const client::RepoId& repo, std::optional<int> version,
                     std::vector<VariantDir>& variants);

}  // namespace kernelhub::publish
