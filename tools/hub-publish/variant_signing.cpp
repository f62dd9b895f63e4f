#include "variant_signing.hpp"

#include "kernelhub/base/internal/atomic_file.hpp"
#include "kernelhub/base/internal/read_file.hpp"
#include "kernelhub/base/internal/sha256.hpp"
#include "kernelhub/fetch/internal/signature_check.hpp"
#include "kernelhub/sigstore/artifact.hpp"
#include "kernelhub/sigstore/bundle.hpp"
#include "kernelhub/sigstore/sign.hpp"
#include "kernelhub/sigstore/trusted_root.hpp"
#include "kernelhub/sigstore/verify.hpp"

namespace kernelhub::publish {

namespace {

// The digest a bundle states it signs (`messageSignature.messageDigest`), if it states one.
std::optional<std::string> stated_digest(const sigstore::Bundle& bundle) {
  const auto* message = std::get_if<sigstore::MessageSignature>(&bundle.content);
  if (message == nullptr || !message->message_digest || message->message_digest->algorithm != "SHA2_256") {
    return std::nullopt;
  }
  return message->message_digest->digest;
}

// Whether `published` is a keyed bundle of the same key (by its hint) over the same metadata.json
// as `fresh`, which this run just made.
bool same_signing(const std::string& published, const std::string& fresh) {
  auto a = sigstore::Bundle::parse(published);
  auto b = sigstore::Bundle::parse(fresh);
  return a && b && !a->has_certificate() && a->public_key_hint && a->public_key_hint == b->public_key_hint &&
         stated_digest(*a) && stated_digest(*a) == stated_digest(*b);
}

}  // namespace

Status sign_variants(const std::filesystem::path& key_path, const std::filesystem::path& staging,
                     std::vector<VariantDir>& variants, const PublishedBundle& published) {
  KH_ASSIGN_OR_RETURN(const std::string key, read_file(key_path));
  for (VariantDir& v : variants) {
    KH_ASSIGN_OR_RETURN(const std::string metadata, read_file(v.dir / "metadata.json"));
    auto made = sigstore::sign_with_key(key, metadata);
    if (!made) return unexpected(made.error().with_context("signing " + v.name + " with `" + key_path.string() + "`"));
    std::string bundle = std::move(*made);
    if (auto current = published ? published(v.name) : std::nullopt; current && same_signing(*current, bundle)) {
      bundle = std::move(*current);
    }
    const std::filesystem::path path = staging / "signed" / v.name / kSigstoreBundleName;
    std::error_code ec;
    std::filesystem::create_directories(path.parent_path(), ec);
    if (ec) return unexpected(os_error("cannot create `" + path.parent_path().string() + "`", ec.value()));
    KH_RETURN_IF_ERROR(write_file_atomic(path, bundle));
    v.bundle = path;
  }
  return {};
}

void check_bundles(const std::vector<VariantDir>& variants, const EnvironmentSource& env,
                   std::vector<std::string>& problems) {
  std::optional<Result<sigstore::TrustedRoot>> root;  // read only when a bundle needs it
  for (const VariantDir& v : variants) {
    if (!v.bundle) continue;
    const std::string label = v.name + ": its `" + std::string(kSigstoreBundleName) + "` ";
    if (v.digest_added) {
      problems.push_back(label +
                         "signs metadata.json without a digest, and publishing adds one (which changes the "
                         "bytes it signs): sign after the digest is written (kernel-builder's hash step), or "
                         "pass --sign-key KEY");
      continue;
    }
    auto text = read_file(*v.bundle);
    auto metadata = read_file(v.dir / "metadata.json");
    if (!text || !metadata) {
      problems.push_back(
          label + "or metadata.json cannot be read: " + (!text ? text.error().message : metadata.error().message));
      continue;
    }
    auto bundle = sigstore::Bundle::parse(*text);
    if (!bundle) {
      problems.push_back(label + "is not a Sigstore bundle: " + bundle.error().message);
      continue;
    }
    const Sha256Digest digest = sha256(*metadata);
    if (auto stated = stated_digest(*bundle); !stated || *stated != std::string(digest.begin(), digest.end())) {
      problems.push_back(label +
                         "does not sign this metadata.json (it was signed before metadata.json last "
                         "changed, or over something else): sign again, or pass --sign-key KEY");
      continue;
    }
    if (!bundle->has_certificate()) continue;  // a keyed bundle: only its users hold the key
    if (!root) root = sigstore::TrustedRoot::from_environment(env);
    if (!*root) {
      problems.push_back(label + "cannot be checked: " + (*root).error().message);
      continue;
    }
    auto verified = sigstore::verify(*bundle, sigstore::Artifact::bytes(*metadata), **root);
    if (!verified) {
      problems.push_back(label + "does not verify against the trusted root (" + (*root)->source() +
                         "): " + verified.error().message +
                         "; a bundle of another Sigstore instance needs KERNELHUB_SIGSTORE_TRUSTED_ROOT");
    }
  }
}

}  // namespace kernelhub::publish
