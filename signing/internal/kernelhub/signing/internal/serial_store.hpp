// SerialStore: the highest manifest serial accepted so far for each (repo, version, variant), kept
// on local disk where a download cannot write, so a validly signed but older build of the same
// version is refused (a rollback / freeze attack; TUF keeps its last-seen versions for the same
// reason).
//
// Layout: `<dir>/<org>--<name>/<variant>@v<N>` (`@none` without a version) holding the serial in
// decimal. Default dir: $XDG_STATE_HOME/kernelhub/signature-serials, else
// ~/.local/state/kernelhub/signature-serials.
//
// Best effort where it cannot keep state: a folder it cannot create or a file it cannot write
// skips recording (a read-only home must not stop loads); a record it cannot read is an error.
//
// Thread safety: concurrent callers, threads or processes, serialise on an flock per record.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>

#include "kernelhub/base/environment_source.hpp"
#include "kernelhub/base/result.hpp"
#include "kernelhub/signing/internal/manifest.hpp"

namespace kernelhub::signing {

class SerialStore {
 public:
  explicit SerialStore(std::filesystem::path dir) : dir_(std::move(dir)) {}

  static std::optional<std::filesystem::path> default_dir(const EnvironmentSource& env);

  // Refuses `serial` below the recorded one for `identity`; records it when higher.
  // Errors: kBadSignature (rollback), kIo (a record that cannot be read).
  Status check_and_record(const VariantIdentity& identity, std::uint64_t serial) const;

  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
};

}  // namespace kernelhub::signing
