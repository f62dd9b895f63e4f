#include "variant_signing.hpp"

#include <algorithm>

#include "kernelhub/base/atomic_file.hpp"
#include "kernelhub/base/read_file.hpp"
#include "kernelhub/signing/keys.hpp"
#include "kernelhub/signing/sign.hpp"
#include "kernelhub/signing/signature_file.hpp"
#include "kernelhub/signing/variant_files.hpp"

namespace kernelhub::publish {

namespace {

// `dir`'s signature beside it, as written (its signature is not checked: this is the publisher's
// own file, read to tell whether it is still current). nullopt: none or unreadable.
std::optional<signing::SignatureFile> signature_beside(const std::filesystem::path& dir) {
  auto text = read_file(signing::signature_path(dir));
  if (!text) return std::nullopt;
  auto file = signing::SignatureFile::parse(*text);
  return file ? std::optional(std::move(*file)) : std::nullopt;
}

// Why the signature beside `dir` does not sign `identity` over exactly the files there now, or
// empty when it does.
std::string why_stale(const std::filesystem::path& dir, const signing::SignatureFile& file,
                      const signing::VariantIdentity& identity) {
  auto manifest = signing::Manifest::parse(file.manifest_bytes);
  if (!manifest) return "its manifest does not parse";
  auto signed_for = manifest->identity;
  signed_for.source_commit.clear();  // `kernelhub sign --commit` may name one; publishing does not
  if (signed_for != identity) {
    return "it signs " + manifest->identity.repo + " version " +
           (manifest->identity.version ? std::to_string(*manifest->identity.version) : std::string("none")) +
           " variant " + manifest->identity.variant;
  }
  auto files = signing::hash_variant_files(dir);
  if (!files || !files->problems.empty() || files->files != manifest->files) {
    return "the files changed after it was made";
  }
  return {};
}

}  // namespace

Status sign_variants(const std::filesystem::path& key_path, const client::RepoId& repo, std::optional<int> version,
                     std::vector<VariantDir>& variants, const PublishedSignature& published) {
  KH_ASSIGN_OR_RETURN(signing::PrivateKey key, signing::PrivateKey::read(key_path));
  const auto public_key = key.public_key();
  for (VariantDir& v : variants) {
    const signing::VariantIdentity identity{repo.to_string(), version, v.name, ""};
    const auto current = [&](const std::optional<signing::SignatureFile>& file) {
      return file && file->key_id == public_key.key_id() && public_key.verify(file->manifest_bytes, file->signature) &&
             why_stale(v.dir, *file, identity).empty();
    };
    v.signature = signing::signature_path(v.dir);
    if (current(signature_beside(v.dir))) continue;
    if (auto bytes = published ? published(v.name) : std::nullopt) {
      auto file = signing::SignatureFile::parse(*bytes);
      if (current(file ? std::optional(std::move(*file)) : std::nullopt)) {
        KH_RETURN_IF_ERROR(write_file_atomic(*v.signature, *bytes));
        continue;
      }
    }
    auto made = signing::sign_variant(v.dir, identity, key);
    if (!made) return unexpected(made.error().with_context("signing " + v.name));
  }
  return {};
}

void check_existing_signatures(const client::RepoId& repo, std::optional<int> version,
                               const std::vector<VariantDir>& variants, std::vector<std::string>& problems) {
  for (const VariantDir& v : variants) {
    if (!v.signature) continue;
    const auto existing = signature_beside(v.dir);
    const std::string why =
        existing ? why_stale(v.dir, *existing, {repo.to_string(), version, v.name, ""}) : "it is not a signature file";
    if (!why.empty()) {
      problems.push_back(v.name + ": the signature beside it (" + v.signature->filename().string() +
                         ") is stale: " + why + "; sign again (--sign-key KEY) or delete it");
    }
  }
}

}  // namespace kernelhub::publish
