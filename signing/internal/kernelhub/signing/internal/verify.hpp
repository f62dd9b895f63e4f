// Verifying a variant directory before anything in it is parsed or loaded (docs/SIGNING.md):
//
//   1. the trusted keys for the repo (its own and its org's) come from local configuration;
//   2. the signature file (`<variant>.kernelhub.sig` beside the folder, else layout v1's
//      `<variant>/kernelhub.sig` inside it: signature_file.hpp) is read with a size cap, its first
//      line split off, and the signature checked over the exact manifest bytes with each trusted
//      key. Only then is the manifest parsed;
//   3. the manifest must be for what was asked: repo, variant, version and (when known) source
//      commit, so a validly signed manifest of another variant or an older version is refused;
//   4. the directory must hold exactly the signed files: same paths, sizes and sha256, nothing
//      extra (a layout v1 signature inside the folder excepted), nothing missing, no symlink (except
//      the cache's own snapshot links) or device;
//   5. the manifest's serial must not be below the last one accepted here (serial_store.hpp).
//
// Fail closed: with a trusted key configured, a missing signature is an error (stripping the file
// must not downgrade to "unsigned"); a present signature that does not verify is always fatal.
// With no key configured and no requirement the variant passes as unsigned, unchecked.
//
// Thread safety: free functions; they only read the disk.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "kernelhub/base/environment_source.hpp"
#include "kernelhub/base/internal/file_digests.hpp"
#include "kernelhub/base/result.hpp"
#include "kernelhub/signing/internal/manifest.hpp"
#include "kernelhub/signing/internal/trusted_keys.hpp"

namespace kernelhub::signing {

// What the caller asked for; the signed manifest must say the same.
struct ExpectedVariant {
  std::string repo;                          // org/name
  std::optional<int> version;                // checked when set
  std::string variant;                       // always checked
  std::optional<std::string> source_commit;  // checked when set
  bool check_freshness = true;               // refuse a serial below the last accepted one

  // For a Hub revision: `v<N>` sets the version N; a branch or commit leaves it unchecked. A
  // commit is content-addressed (the caller chose those exact bytes, e.g. from a lock file), so
  // it is not held to the freshest serial either.
  static ExpectedVariant for_revision(std::string repo, std::string_view revision, std::string variant);
};

struct VerifyPolicy {
  TrustedKeys trusted_keys;
  bool require_signature = false;                         // refuse unsigned variants even with no key configured
  std::optional<std::filesystem::path> serial_store_dir;  // SerialStore; nullopt: no freshness check

  // TrustedKeys::from_environment, SerialStore::default_dir, and KERNELHUB_REQUIRE_SIGNATURE
  // (truthy) or `require`.
  static Result<VerifyPolicy> from_environment(const EnvironmentSource& env, bool require = false);
};

struct VerifiedVariant {
  bool signature_checked = false;  // false: unsigned (or signed) but no key to check it with
  std::optional<Manifest> manifest;
  std::string key_id;     // of the trusted key that verified
  std::string key_scope;  // and the scope it was trusted for
};

// Errors: kMissingSignature, kBadSignature (also a malformed or unparsable signature file, a
// manifest for something else, or an older serial), kIntegrityMismatch (files differ from the signed manifest: every
// difference listed), kIo.
// `digests`, when given, is shared with the load's other checks (each file is read once).
Result<VerifiedVariant> verify_variant(const std::filesystem::path& dir, const ExpectedVariant& expected,
                                       const VerifyPolicy& policy, FileDigests* digests = nullptr);

// get_kernel's one call: the policy from the environment, then verify_variant.
Status check_variant(const std::filesystem::path& dir, const ExpectedVariant& expected, bool require_signature,
                     const EnvironmentSource& env, FileDigests* digests = nullptr);

}  // namespace kernelhub::signing
