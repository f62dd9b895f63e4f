// The trusted root a `kernelhub sigstore` command uses: --trusted-root FILE, else --staging's
// embedded staging root, else KERNELHUB_SIGSTORE_TRUSTED_ROOT's file, else the embedded
// public-good root.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "kernelhub/base/environment_source.hpp"
#include "kernelhub/sigstore/trusted_root.hpp"

namespace kernelhub::cli {

struct TrustedRootChoice {
  std::optional<std::string> file;  // --trusted-root
  bool staging = false;             // --staging
};

// Adds --trusted-root FILE and --staging (one or the other) to `app`, filling `choice`.
void add_trusted_root_options(CLI::App& app, TrustedRootChoice& choice, const std::string& file_help,
                              const std::string& staging_help);

Result<sigstore::TrustedRoot> trusted_root_in_force(const TrustedRootChoice& choice, const EnvironmentSource& env);

}  // namespace kernelhub::cli
