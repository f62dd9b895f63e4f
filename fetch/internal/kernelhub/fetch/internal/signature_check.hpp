// The Sigstore signature of a Hub variant, checked at every load before its metadata.json is
// parsed (docs/SIGNING.md).
//
// The Hub signs `build/<variant>/metadata.json` into `build/<variant>/metadata.json.sigstore`;
// metadata.json's digest then covers every other file. A load:
//   1. verifies the bundle (chain to the trusted root's Fulcio, SCT, transparency log entry or
//      timestamps, the signature over metadata.json's exact bytes: sigstore/verify.hpp) against
//      the trusted root (KERNELHUB_SIGSTORE_TRUSTED_ROOT, else the embedded public-good one). A
//      bundle that does not verify refuses the load (kBadSignature), whatever else was asked;
//   2. asks whether the signer is one the configuration accepts for the repo: its own signers
//      (signers.hpp), else the kernels package's default policy (kernels-community's workflows);
//   3. a variant with no bundle, or whose signer is not accepted, is what the kernels package
//      warns about: a warning, or an error where a signature is required (the repo or its org has
//      signers configured, require_signature, KERNELHUB_REQUIRE_SIGNATURE).
// A variant signed with kernelhub's own Ed25519 `kernelhub.sig` (layout v1 or v2:
// signing/signature_file.hpp; signing/verify.hpp), and no bundle, is accepted when a configured
// key verifies it.
//
// What a verification proved is remembered (SignatureRecords): keyed by the sha256 of the bundle
// and of metadata.json (both proven by the load's FileDigests) and the trusted root, it holds the
// signing certificate (or key). A warm load finds it and checks the policy again against that
// certificate; nothing another program wrote (the kernels package's receipts) counts as proof.
//
// Thread safety: free functions over values; SignatureRecords may be shared between threads.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "kernelhub/base/environment_source.hpp"
#include "kernelhub/base/internal/file_digests.hpp"
#include "kernelhub/base/result.hpp"
#include "kernelhub/fetch/internal/signers.hpp"
#include "kernelhub/fetch/metadata.hpp"
#include "kernelhub/signing/internal/trusted_keys.hpp"
#include "kernelhub/sigstore/signer.hpp"
#include "kernelhub/sigstore/trusted_root.hpp"

namespace kernelhub {

// The name of the bundle inside a variant folder, as kernel-builder and the kernels package name it.
inline constexpr std::string_view kSigstoreBundleName = "metadata.json.sigstore";

// What a load learned about a variant's signature.
struct SignatureVerdict {
  enum class Status {
    kAccepted,         // verified, and signed by a signer the configuration accepts
    kUnsigned,         // no bundle (and no accepted kernelhub.sig)
    kNotAccepted,      // verified, but signed by someone the configuration does not accept
    kMalformed,        // a bundle that is not one (not JSON, an unknown media type, ...): never loaded
    kDoesNotVerify,    // a bundle whose chain, log entry, time or signature fails: never loaded
    kMetadataMissing,  // a bundle, and no metadata.json for it to sign
  };
  Status status = Status::kUnsigned;
  std::string signer;        // who signed (sigstore::Signer::describe()), when a bundle verified
  std::string why_not;       // what failed (kMalformed, kDoesNotVerify), or what the policy wanted and
                             // what the certificate held (kNotAccepted)
  bool required = false;     // refuse anything but kAccepted (configured signers, or a requirement)
  bool configured = false;   // the repo or its org has signers of its own
  bool from_record = false;  // a record of an earlier verification proved the bundle (no crypto)
  // kNotAccepted by a policy of several alternatives: how many (the kernels package then says
  // "0 of N policies succeeded").
  std::size_t policy_alternatives = 0;
};

// The signers of the bundles a process verified, by record key (SignatureRecords::key_of).
class VerifiedSignatures {
 public:
  std::optional<sigstore::Signer> find(const std::string& key) const;
  void keep(const std::string& key, const sigstore::Signer& signer);

 private:
  mutable std::mutex mutex_;
  std::map<std::string, sigstore::Signer> signers_;
};

// The bundles verified on this machine (see above): in memory for the process (`in_memory`, not
// owned; none: files only), and in `<state dir>/signatures/` (never in the cache) for later ones.
class SignatureRecords {
 public:
  SignatureRecords(std::optional<std::filesystem::path> state_dir, VerifiedSignatures* in_memory);

  std::optional<sigstore::Signer> find(const std::string& key) const;
  // Best effort: a record that cannot be written costs a verification later.
  void keep(const std::string& key, const sigstore::Signer& signer) const;

  // The key of a verification: the bundle, the signed metadata.json and the root it verified under.
  static std::string key_of(const Sha256Digest& bundle, const Sha256Digest& metadata, std::string_view root_id);

 private:
  std::optional<std::filesystem::path> dir_;
  VerifiedSignatures* in_memory_;
};

// What signature checks read: the configuration, once per load.
struct SignatureSettings {
  // The root's identity in records: "public-good", or the sha256 of the file that replaces it.
  std::string root_id;
  Signers signers;                                        // the signers file and the trusted keys
  signing::TrustedKeys legacy_keys;                       // the trusted keys, for a kernelhub.sig (layout v1 or v2)
  std::optional<std::filesystem::path> serial_store_dir;  // kernelhub.sig's freshness record
  bool require_signature = false;

  // The trusted root, parsed when a bundle must be verified (a warm load, whose record proves its
  // bundle, parses none). Errors: kCorruptFile for a root file that does not parse.
  Result<std::shared_ptr<const sigstore::TrustedRoot>> root() const;

  // KERNELHUB_SIGSTORE_TRUSTED_ROOT (read now, parsed when needed; else the embedded root), the
  // signers (signers.hpp) and KERNELHUB_REQUIRE_SIGNATURE (or `require`). Errors: those of
  // reading the root file and the signers.
  static Result<SignatureSettings> from_environment(const EnvironmentSource& env, bool require);

 private:
  std::string root_text_;  // the file's text; empty: the embedded root
  std::string root_source_;
  std::shared_ptr<std::shared_ptr<const sigstore::TrustedRoot>> parsed_ =
      std::make_shared<std::shared_ptr<const sigstore::TrustedRoot>>();
};

// Steps 1 and 2 for the variant folder `dir` of `repo`: every outcome of the bundle is a verdict.
// `digests` holds what the load already hashed; `revision` is what a kernelhub.sig must name.
// Errors: those of a kernelhub.sig that does not verify (signing/verify.hpp), kIo.
Result<SignatureVerdict> check_signature(const std::filesystem::path& dir, std::string_view repo,
                                         std::string_view variant, std::string_view revision,
                                         const SignatureSettings& settings, const SignatureRecords& records,
                                         FileDigests* digests);

// Step 3: an error where the verdict must refuse the load: always for a bundle that is malformed
// or does not verify (kBadSignature); where a signature is required, for no bundle
// (kMissingSignature) and a signer not accepted (kUntrustedPublisher). Each with its Problem
// (SignatureRefused, problem.hpp).
Status refuse_unless_accepted(const SignatureVerdict& verdict, std::string_view repo, std::string_view variant);

// Step 3: the warning a load that goes ahead says (with its Problem, SignatureNotAccepted); none
// when accepted.
std::optional<Warning> signature_warning(const SignatureVerdict& verdict, const Metadata& metadata,
                                         std::string_view repo, std::string_view variant);

}  // namespace kernelhub
