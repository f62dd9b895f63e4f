// kernelhub sigstore trusted-root [--staging | --trusted-root FILE] [--json]: the Sigstore trusted
// root in force (sigstore_root_option.hpp says which) and what it trusts: each Fulcio CA, Rekor log,
// CT log and timestamp authority with the period it is trusted for.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "command.hpp"
#include "kernelhub/base/internal/hex.hpp"
#include "sigstore_root_option.hpp"

namespace kernelhub::cli {

namespace {

constexpr std::string_view kCommand = "kernelhub sigstore trusted-root";

struct TrustedRootArguments {
  TrustedRootChoice root;
  bool json = false;
};

nlohmann::json validity_json(const sigstore::ValidityPeriod& period) {
  return {{"start", sigstore::to_rfc3339(period.start)},
          {"end", period.end ? nlohmann::json(sigstore::to_rfc3339(*period.end)) : nlohmann::json()}};
}

nlohmann::json logs_json(const std::vector<sigstore::TransparencyLogInstance>& logs) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& log : logs) {
    out.push_back({{"base_url", log.base_url},
                   {"key_details", log.key_details},
                   {"log_id", to_hex(log.log_id)},
                   {"usable", log.key_usable},
                   {"valid_for", validity_json(log.valid_for)}});
  }
  return out;
}

nlohmann::json authorities_json(const std::vector<sigstore::CertificateAuthorityInstance>& authorities) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& authority : authorities) {
    out.push_back({{"uri", authority.uri},
                   {"subject", authority.subject},
                   {"certificates", authority.certificates.size()},
                   {"valid_for", validity_json(authority.valid_for)}});
  }
  return out;
}

int run_trusted_root(const TrustedRootArguments& args) {
  auto root = trusted_root_in_force(args.root, process_environment());
  if (!root) return fail(kCommand, root.error(), args.json);
  if (args.json) {
    const nlohmann::json out = {{"source", root->source()},
                                {"certificate_authorities", authorities_json(root->certificate_authorities())},
                                {"transparency_logs", logs_json(root->transparency_logs())},
                                {"ct_logs", logs_json(root->ct_logs())},
                                {"timestamp_authorities", authorities_json(root->timestamp_authorities())}};
    std::printf("%s\n", out.dump(2).c_str());
  } else {
    std::printf("%s", root->describe().c_str());
  }
  return kExitOk;
}

CommandRun define_trusted_root(CLI::App& app) {
  auto args = std::make_shared<TrustedRootArguments>();
  app.description(
      "Print the Sigstore trusted root that `kernelhub sigstore verify-bundle` uses: --trusted-root\n"
      "FILE, else --staging's embedded staging root, else the file KERNELHUB_SIGSTORE_TRUSTED_ROOT\n"
      "names, else the public-good root embedded in kernelhub; then each certificate authority,\n"
      "transparency log, CT log and timestamp authority with the period it is trusted for.");
  add_trusted_root_options(app, args->root, "a trusted_root.json to read instead",
                           "the embedded root of Sigstore's staging instance");
  app.add_flag("--json", args->json,
               "print one JSON object: {\"source\", \"certificate_authorities\", \"transparency_logs\", \"ct_logs\", "
               "\"timestamp_authorities\"}, each entry with its \"valid_for\" {\"start\", \"end\"}");
  return [args] { return run_trusted_root(*args); };
}

}  // namespace

KERNELHUB_SUBCOMMAND("sigstore", "trusted-root", "print the trusted root in force and what it trusts",
                     &define_trusted_root);

}  // namespace kernelhub::cli
