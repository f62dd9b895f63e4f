// TrustedKeys: which public keys may sign which repos. Local configuration only, never anything
// from a download, read once into a value (and built by hand in tests).
//
// A scope is an org (`kernels-community`: every repo of that org) or one repo (`org/name`). Two
// sources, merged:
//
//   KERNELHUB_TRUSTED_KEYS   `scope=KEY[,scope=KEY...]`
//   $XDG_CONFIG_HOME/kernelhub/trusted_keys  (default ~/.config/kernelhub/trusted_keys)
//                            one `scope KEY` per line; blank lines and `#` comments ignored
//
// KEY is the base64 of a raw 32-byte Ed25519 public key (`kernelhub keygen` prints it), or the
// path of a public key file (PEM or base64; relative paths in the config file are relative to
// it). A malformed entry is an error, not a skipped line: a typo must not silently turn
// verification off.
//
// Thread safety: value type.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernelhub/base/environment_source.hpp"
#include "kernelhub/base/result.hpp"
#include "kernelhub/signing/internal/keys.hpp"

namespace kernelhub::signing {

class TrustedKeys {
 public:
  struct Entry {
    std::string scope;
    PublicKey key;
    std::string origin;  // where it was configured, for messages
  };

  // Errors: kInvalidArgument for a scope that is neither `org` nor `org/name`.
  Status add(std::string_view scope, const PublicKey& key, std::string origin = "code");

  // The entries whose scope is `repo` itself or its org.
  std::vector<Entry> for_repo(std::string_view repo) const;
  const std::vector<Entry>& entries() const { return entries_; }
  bool empty() const { return entries_.empty(); }

  // Errors: kInvalidArgument naming the entry and the variable.
  Status add_from_variable(std::string_view value);
  // `origin` names the file; relative key paths are taken from `base_dir`.
  Status add_from_config(std::string_view text, std::string_view origin, const std::filesystem::path& base_dir);

  // $XDG_CONFIG_HOME/kernelhub/trusted_keys, or $HOME/.config/...; nullopt when neither is set.
  static std::optional<std::filesystem::path> config_path(const EnvironmentSource& env);
  // Both sources; a missing config file is no error. Errors: kInvalidArgument, kIo.
  static Result<TrustedKeys> from_environment(const EnvironmentSource& env);

 private:
  std::vector<Entry> entries_;
};

}  // namespace kernelhub::signing
