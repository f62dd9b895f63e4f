// Signers: who may sign the kernels of an org or a repo (docs/SIGNING.md), from local
// configuration only, never from a download. Read once per load into a value.
//
// A scope is an org (`acme`: every repo of it) or one repo (`acme/fast-kernels`). A signer is
//   an identity   the Sigstore certificate of a CI workflow: OIDC issuer, source repository and
//                 the workflow files (build signer URIs) allowed to sign, as the kernels package's
//                 GitHubWorkflowPolicy describes kernels-community's;
//   a public key  a publisher's own key (PEM; Ed25519 or ECDSA P-256/P-384): a bundle signed with
//                 it (`kernelhub sign`, `hub-publish --sign-key`, `cosign sign-blob --key`).
// Sources, merged:
//   the signers file  `$KERNELHUB_SIGNERS`, else `$XDG_CONFIG_HOME/kernelhub/signers.toml`
//                     (default ~/.config/kernelhub/signers.toml), `[[signer]]` tables:
//                       scope = "acme" (or a list), and either
//                       issuer = "...", source-repository = "...", workflows = ["...", ...]
//                       or public-key = "keys/acme.pem" (relative to the file)
//   trusted keys      KERNELHUB_TRUSTED_KEYS and the trusted_keys file (signing/trusted_keys.hpp):
//                     each key is a public-key signer of its scope.
// A scope with signers configured must be signed by one of them (fail closed: stripping the
// signature or re-signing under another identity must not downgrade to a warning). Every other
// repo is held to the kernels package's default policy (kernels-community's workflows), whose
// misses are warnings unless a signature is required.
//
// A malformed entry is an error naming the file and line, not a skipped entry: a typo must not
// silently turn verification off.
//
// Thread safety: value type.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "kernelhub/base/environment_source.hpp"
#include "kernelhub/base/result.hpp"
#include "kernelhub/signing/internal/trusted_keys.hpp"

namespace kernelhub {

// The certificate of a CI workflow run, as Fulcio issues it.
struct WorkflowIdentity {
  std::string issuer;                            // OIDC issuer, e.g. https://token.actions.githubusercontent.com
  std::optional<std::string> source_repository;  // e.g. https://github.com/acme/kernels
  std::vector<std::string> workflows;            // build signer URIs, any of them (empty: any)
};

// A publisher's own key.
struct SigningKey {
  std::string pem;  // SubjectPublicKeyInfo PEM (parsed when a bundle is checked with it)
};

struct Signer {
  std::string scope;  // org or org/name
  std::variant<WorkflowIdentity, SigningKey> who;
  std::string origin;  // where it was configured: file:line or a variable
};

class Signers {
 public:
  // The signers file, and each of `keys` as a public-key signer of its scope; a missing signers
  // file is no error. Errors: kInvalidArgument naming the entry, kIo.
  static Result<Signers> from_environment(const EnvironmentSource& env, const signing::TrustedKeys& keys);

  // The signers file: `$KERNELHUB_SIGNERS`, else the XDG config one; nullopt when no home is known.
  static std::optional<std::filesystem::path> file_path(const EnvironmentSource& env);

  // A signers file's `[[signer]]` tables. `origin` names the file; relative key paths are taken
  // from `base_dir`. Errors: kInvalidArgument naming the line.
  Status add_from_toml(std::string_view text, std::string_view origin, const std::filesystem::path& base_dir);

  void add(Signer signer) { signers_.push_back(std::move(signer)); }

  // The signers whose scope is `repo` itself or its org.
  std::vector<Signer> for_repo(std::string_view repo) const;
  const std::vector<Signer>& all() const { return signers_; }

 private:
  std::vector<Signer> signers_;
};

// Whether `scope` is an org or org/name.
bool is_signer_scope(std::string_view scope);

}  // namespace kernelhub
