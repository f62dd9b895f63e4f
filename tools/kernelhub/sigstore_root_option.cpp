#include "sigstore_root_option.hpp"

namespace kernelhub::cli {

void add_trusted_root_options(CLI::App& app, TrustedRootChoice& choice, const std::string& file_help,
                              const std::string& staging_help) {
  auto* file = app.add_option("--trusted-root", choice.file, file_help)->option_text("FILE");
  app.add_flag("--staging", choice.staging, staging_help)->excludes(file);
}

Result<sigstore::TrustedRoot> trusted_root_in_force(const TrustedRootChoice& choice, const EnvironmentSource& env) {
  if (choice.file) return sigstore::TrustedRoot::read(*choice.file);
  if (choice.staging) return sigstore::TrustedRoot::staging();
  return sigstore::TrustedRoot::from_environment(env);
}

}  // namespace kernelhub::cli
