#include "variant_signing.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#if __has_include("kernelhub/signing/sign.hpp")
#define KERNELHUB_HAVE_SIGNING 1
#include "kernelhub/signing/keys.hpp"
#include "kernelhub/signing/sign.hpp"
#include "kernelhub/signing/signature_file.hpp"
#include "kernelhub/signing/variant_files.hpp"
#endif

namespace kernelhub::publish {

#if KERNELHUB_HAVE_SIGNING
namespace {

// True when `dir`'s kernelhub.sig was made by `key` for `identity` over exactly the files there now.
bool signature_still_current(const std::filesystem::path& dir, const signing::VariantIdentity& identity,
                             const signing::PrivateKey& key) {
  const auto path = dir / std::string(signing::kSignatureFileName);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  auto file = signing::SignatureFile::parse(text.str());
  if (!file) return false;
  const auto public_key = key.public_key();
  if (file->key_id != public_key.key_id() || !public_key.verify(file->manifest_bytes, file->signature)) return false;
  auto manifest = signing::Manifest::parse(file->manifest_bytes);
  if (!manifest || manifest->identity != identity) return false;
  auto files = signing::hash_variant_files(dir);
  return files && files->problems.empty() && files->files == manifest->files;
}

}  // namespace
#endif

Status sign_variants(const std::filesystem::path& key_path, const client::RepoId& repo, std::optional<int> version,
                     std::vector<VariantDir>& variants) {
#if KERNELHUB_HAVE_SIGNING
  KH_ASSIGN_OR_RETURN(signing::PrivateKey key, signing::PrivateKey::read(key_path));
  for (VariantDir& v : variants) {
    const signing::VariantIdentity identity{repo.to_string(), version, v.name, ""};
    if (!signature_still_current(v.dir, identity, key)) {
      auto made = signing::sign_variant(v.dir, identity, key);
      if (!made) return unexpected(made.error().with_context("signing " + v.name));
    }
    const std::filesystem::path sig(std::string(signing::kSignatureFileName));
    if (std::find(v.files.begin(), v.files.end(), sig) == v.files.end()) {
      v.files.push_back(sig);
      std::sort(v.files.begin(), v.files.end());
    }
  }
  return {};
#else
  (void)key_path, (void)repo, (void)version, (void)variants;
  return unexpected(ErrorCode::kInvalidArgument, "this build of hub-publish has no signing support (signing/)");
#endif
}

}  // namespace kernelhub::publish
