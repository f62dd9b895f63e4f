// kernelhub sigstore <command>: Sigstore bundles, verified offline against a trusted root
// (sigstore/). A command group: each subcommand lives in cmd_sigstore_<name>.cpp and registers
// itself with KERNELHUB_SUBCOMMAND("sigstore", ...).
#include "command.hpp"

namespace kernelhub::cli {

namespace {

CommandRun define_sigstore(CLI::App& app) {
  app.description(
      "Verify Sigstore bundles (what `cosign sign-blob --bundle` and the kernels-community CI write,\n"
      "e.g. a variant's metadata.json.sigstore) offline, against the trusted root embedded in\n"
      "kernelhub (Sigstore's public-good instance) or the one KERNELHUB_SIGSTORE_TRUSTED_ROOT names.");
  return define_subcommands(app, "sigstore");
}

}  // namespace

KERNELHUB_COMMAND("sigstore", "verify Sigstore bundles offline (verify-bundle, trusted-root)", &define_sigstore);

}  // namespace kernelhub::cli
