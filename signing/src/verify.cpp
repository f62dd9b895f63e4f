#include "kernelhub/signing/internal/verify.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>

#include "kernelhub/signing/internal/serial_store.hpp"
#include "kernelhub/signing/internal/signature_file.hpp"
#include "kernelhub/signing/internal/variant_files.hpp"

namespace kernelhub::signing {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kMaxSignatureFileSize = kMaxManifestSize + 4096;

std::string scopes_of(const std::vector<TrustedKeys::Entry>& keys) {
  std::string out;
  for (const auto& k : keys) out += (out.empty() ? "" : ", ") + k.scope + " (key " + k.key.key_id() + ")";
  return out;
}

// Reads at most kMaxSignatureFileSize + 1 bytes through an O_NOFOLLOW descriptor (the path was
// checked by non_regular_file_problem; a cache link is opened through its resolved path).
Result<std::string> read_capped(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return unexpected(os_error("cannot open `" + path.string() + "`", errno));
  std::string out;
  char buffer[65536];
  while (out.size() <= kMaxSignatureFileSize) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int saved = errno;
      ::close(fd);
      return unexpected(os_error("cannot read `" + path.string() + "`", saved));
    }
    if (n == 0) break;
    out.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

std::string identity_text(const VariantIdentity& id) {
  return id.repo + " version " + (id.version ? std::to_string(*id.version) : std::string("none")) + " variant " +
         id.variant + " source commit " + (id.source_commit.empty() ? std::string("none") : id.source_commit);
}

// Step 3: the signed manifest is for what was asked.
Status check_identity(const Manifest& manifest, const ExpectedVariant& expected, const fs::path& dir) {
  std::vector<std::string> differences;
  const VariantIdentity& got = manifest.identity;
  if (got.repo != expected.repo) differences.push_back("repo `" + got.repo + "`, asked `" + expected.repo + "`");
  if (got.variant != expected.variant) {
    differences.push_back("variant `" + got.variant + "`, asked `" + expected.variant + "`");
  }
  if (expected.version && got.version != expected.version) {
    differences.push_back("version " + (got.version ? std::to_string(*got.version) : std::string("none")) + ", asked " +
                          std::to_string(*expected.version));
  }
  if (expected.source_commit && got.source_commit != *expected.source_commit) {
    differences.push_back("source commit `" + got.source_commit + "`, asked `" + *expected.source_commit + "`");
  }
  if (differences.empty()) return {};
  std::string message =
      "the signature of `" + dir.string() + "` is valid but signs another build (" + identity_text(got) + "):";
  for (const auto& d : differences) message += "\n  - " + d;
  message +=
      "\nA correctly signed manifest was copied from another variant or an older version (a replay or "
      "mix-and-match); do not load it. Ask the publisher to sign this variant.";
  return unexpected(ErrorCode::kBadSignature, message);
}

// The signature of `dir`: layout v2 beside it, else layout v1 inside it; nullopt for neither.
std::optional<std::pair<fs::path, SignatureLayout>> find_signature(const fs::path& dir) {
  std::error_code ec;
  for (const auto& [path, layout] : {std::pair{signature_path(dir), SignatureLayout::kV2Beside},
                                     std::pair{legacy_signature_path(dir), SignatureLayout::kV1Inside}}) {
    if (fs::exists(fs::symlink_status(path, ec))) return std::pair{path, layout};
  }
  return std::nullopt;
}

// Step 4: the directory holds exactly the signed files.
Status check_files(const Manifest& manifest, const fs::path& dir, SignatureLayout layout, FileDigests* digests) {
  KH_ASSIGN_OR_RETURN(VariantFiles actual, hash_variant_files(dir, digests, layout));
  std::vector<std::string> problems = std::move(actual.problems);
  std::map<std::string, const ManifestFile*> on_disk;
  for (const auto& f : actual.files) on_disk[f.path] = &f;
  for (const auto& signed_file : manifest.files) {
    auto it = on_disk.find(signed_file.path);
    if (it == on_disk.end()) {
      problems.push_back("`" + signed_file.path + "` is signed but missing");
      continue;
    }
    const ManifestFile& found = *it->second;
    if (found.size != signed_file.size) {
      problems.push_back("`" + signed_file.path + "` is " + std::to_string(found.size) + " bytes, signed as " +
                         std::to_string(signed_file.size));
    } else if (found.sha256 != signed_file.sha256) {
      problems.push_back("`" + signed_file.path + "` has sha256 " + to_hex(found.sha256) + ", signed as " +
                         to_hex(signed_file.sha256));
    }
    on_disk.erase(it);
  }
  for (const auto& [path, file] : on_disk) problems.push_back("`" + path + "` is not in the signed manifest");
  if (problems.empty()) return {};
  std::string message = "the files of `" + dir.string() + "` do not match its signed manifest:";
  for (const auto& p : problems) message += "\n  - " + p;
  message +=
      "\nThe variant was changed after it was signed; do not load it. Download it again (delete it from "
      "the cache first) or ask the publisher.";
  return unexpected(ErrorCode::kIntegrityMismatch, message);
}

}  // namespace

ExpectedVariant ExpectedVariant::for_revision(std::string repo, std::string_view revision, std::string variant) {
  ExpectedVariant out{std::move(repo), std::nullopt, std::move(variant), std::nullopt};
  const bool is_commit = revision.size() == 40 && std::all_of(revision.begin(), revision.end(), [](char c) {
                           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
                         });
  out.check_freshness = !is_commit;
  if (revision.size() >= 2 && revision.size() <= 10 && revision[0] == 'v' &&
      std::all_of(revision.begin() + 1, revision.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    out.version = std::stoi(std::string(revision.substr(1)));
  }
  return out;
}

Result<VerifyPolicy> VerifyPolicy::from_environment(const EnvironmentSource& env, bool require) {
  KH_ASSIGN_OR_RETURN(TrustedKeys keys, TrustedKeys::from_environment(env));
  return VerifyPolicy{std::move(keys), require || is_truthy(env(env_vars::kKernelhubRequireSignature)),
                      SerialStore::default_dir(env)};
}

Result<VerifiedVariant> verify_variant(const fs::path& dir, const ExpectedVariant& expected, const VerifyPolicy& policy,
                                       FileDigests* digests) {
  const std::vector<TrustedKeys::Entry> keys = policy.trusted_keys.for_repo(expected.repo);
  const auto found = find_signature(dir);
  std::error_code ec;
  const std::string where = "`" + expected.repo + "` variant `" + expected.variant + "` (`" + dir.string() + "`)";
  const std::string no_signature = "no signature (`" + signature_path(dir).filename().string() + "` beside its folder)";

  // Step 1: is there anything to check, and with what.
  if (!found) {
    if (!keys.empty()) {
      return unexpected(ErrorCode::kMissingSignature,
                        where + " has " + no_signature + ", but a trusted key is configured for " + scopes_of(keys) +
                            ", so it must be signed. The signature was stripped or the publisher did not sign this "
                            "build; do not load it, or remove the key from " +
                            std::string(env_vars::kKernelhubTrustedKeys) +
                            " / the trusted_keys file if the repo is no longer signed");
    }
    if (policy.require_signature) {
      return unexpected(ErrorCode::kMissingSignature,
                        where + " is not signed (" + no_signature +
                            ") and a signature is required. Ask the publisher to sign it (`kernelhub sign`) and "
                            "configure their public key in " +
                            std::string(env_vars::kKernelhubTrustedKeys) + "=" +
                            expected.repo.substr(0, expected.repo.find('/')) + "=KEY");
    }
    return VerifiedVariant{};
  }
  if (keys.empty()) {
    if (policy.require_signature) {
      return unexpected(ErrorCode::kMissingSignature,
                        where + " is signed, but no trusted key is configured for `" + expected.repo + "` or `" +
                            expected.repo.substr(0, expected.repo.find('/')) +
                            "`, so the signature cannot be checked and a checked signature is required. Get the "
                            "publisher's public key from them (not from the repo) and add it to " +
                            std::string(env_vars::kKernelhubTrustedKeys) + " or the trusted_keys file");
    }
    return VerifiedVariant{};
  }

  // Step 2: verify the exact bytes before parsing them.
  const auto& [sig_path, layout] = *found;
  const std::string sig_name = "`" + sig_path.filename().string() + "`";
  fs::path readable = sig_path;
  if (auto problem = non_regular_file_problem(sig_path, snapshot_blobs_dir(dir))) {
    return unexpected(ErrorCode::kBadSignature, where + ": " + sig_name + " " + *problem);
  }
  if (fs::is_symlink(fs::symlink_status(sig_path, ec))) readable = fs::canonical(sig_path, ec);
  KH_ASSIGN_OR_RETURN(std::string bytes, read_capped(readable));
  if (bytes.size() > kMaxSignatureFileSize) {
    return unexpected(ErrorCode::kBadSignature,
                      where + ": " + sig_name + " is larger than the 16 MiB limit; it is not a signature file");
  }
  auto file = SignatureFile::parse(bytes);
  if (!file) return unexpected(file.error().with_context(where));
  const TrustedKeys::Entry* signer = nullptr;
  for (const auto& entry : keys) {
    if (entry.key.verify(file->manifest_bytes, file->signature)) {
      signer = &entry;
      break;
    }
  }
  if (signer == nullptr) {
    return unexpected(ErrorCode::kBadSignature,
                      where + ": the signature does not verify with any trusted key for it (" + scopes_of(keys) +
                          "); the file names key " + file->key_id +
                          ". Either the manifest was altered or it was signed by a key you do not trust; do not "
                          "load it. If the publisher rotated keys, get the new public key from them and configure it");
  }

  // Step 3: only now parse, then check it is for what was asked.
  auto manifest = Manifest::parse(file->manifest_bytes);
  if (!manifest) {
    return unexpected(
        ErrorCode::kBadSignature,
        where + ": " + manifest.error().message + " (the signature verifies, so a newer kernelhub may understand it)");
  }
  KH_RETURN_IF_ERROR(check_identity(*manifest, expected, dir));

  // Step 4: the files are the signed files.
  KH_RETURN_IF_ERROR(check_files(*manifest, dir, layout, digests));

  // Step 5: not older than what this machine already accepted.
  if (expected.check_freshness && policy.serial_store_dir) {
    KH_RETURN_IF_ERROR(SerialStore(*policy.serial_store_dir).check_and_record(manifest->identity, manifest->serial));
  }
  return VerifiedVariant{true, std::move(*manifest), signer->key.key_id(), signer->scope};
}

Status check_variant(const fs::path& dir, const ExpectedVariant& expected, bool require_signature,
                     const EnvironmentSource& env, FileDigests* digests) {
  KH_ASSIGN_OR_RETURN(VerifyPolicy policy, VerifyPolicy::from_environment(env, require_signature));
  KH_ASSIGN_OR_RETURN(VerifiedVariant verified, verify_variant(dir, expected, policy, digests));
  (void)verified;
  return {};
}

}  // namespace kernelhub::signing
