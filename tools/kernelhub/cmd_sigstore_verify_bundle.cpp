// kernelhub sigstore verify-bundle [--staging] --bundle FILE (--certificate-identity I
// --certificate-oidc-issuer U | --policy kernels | --key PATH) [--trusted-root FILE]
// [--allow-no-tlog] [--json] FILE_OR_DIGEST: verifies a Sigstore bundle over an artifact, offline
// (sigstore/verify.hpp), then the signer against the identity asked for (sigstore/policy.hpp).
// Speaks the Sigstore conformance suite's client protocol (its docs/cli_protocol.md,
// `verify-bundle`): exit 0 only when verified; otherwise one line saying why on stderr and the
// status of its kind (8: the signature or signer is refused, 9: a file is malformed, 2: usage).
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "command.hpp"
#include "error_json.hpp"
#include "kernelhub/base/internal/read_file.hpp"
#include "kernelhub/sigstore/artifact.hpp"
#include "kernelhub/sigstore/bundle.hpp"
#include "kernelhub/sigstore/policy.hpp"
#include "kernelhub/sigstore/verify.hpp"
#include "sigstore_root_option.hpp"

namespace kernelhub::cli {

namespace {

constexpr std::string_view kCommand = "kernelhub sigstore verify-bundle";

struct VerifyBundleArguments {
  TrustedRootChoice root;
  std::string bundle;
  std::optional<std::string> identity;
  std::optional<std::string> issuer;
  std::optional<std::string> policy;
  std::optional<std::string> key;
  bool allow_no_tlog = false;
  bool json = false;
  std::string artifact;
};

// The protocol's FILE_OR_DIGEST: `sha256:` and 64 hex digits, and not a path on disk, is a digest;
// anything else is a file.
Result<sigstore::Artifact> artifact_of(const std::string& text) {
  std::error_code ec;
  if (text.starts_with("sha256:") && text.size() == 7 + 64 && !std::filesystem::exists(text, ec)) {
    if (auto digest = sigstore::Artifact::sha256(text)) return digest;
  }
  KH_ASSIGN_OR_RETURN(auto bytes, read_file(text));
  return sigstore::Artifact::bytes(std::move(bytes));
}

std::string_view source_name(sigstore::TimeSource source) {
  return source == sigstore::TimeSource::kTransparencyLog ? "transparency_log" : "timestamp_authority";
}

nlohmann::json signer_json(const sigstore::Signer& signer) {
  if (const auto* key = std::get_if<sigstore::KeyIdentity>(&signer.identity)) {
    return {{"kind", "key"}, {"fingerprint", "sha256:" + key->fingerprint}};
  }
  const auto& identity = std::get<sigstore::CertificateIdentity>(signer.identity);
  const auto optional = [](const std::optional<std::string>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
  return {{"kind", "certificate"},
          {"subject_alternative_names", identity.subject_alternative_names},
          {"issuer", optional(identity.issuer_v2 ? identity.issuer_v2 : identity.issuer_v1)},
          {"source_repository_uri", optional(identity.source_repository_uri)},
          {"source_repository_ref", optional(identity.source_repository_ref)},
          {"source_repository_digest", optional(identity.source_repository_digest)},
          {"build_signer_uri", optional(identity.build_signer_uri)}};
}

int run_verify_bundle(const VerifyBundleArguments& args, const CLI::App& app) {
  const bool by_identity = args.identity || args.issuer;
  if (by_identity && !(args.identity && args.issuer)) {
    return usage_error(app, "--certificate-identity and --certificate-oidc-issuer go together");
  }
  if (by_identity + args.policy.has_value() + args.key.has_value() != 1) {
    return usage_error(app, "give one of --certificate-identity/--certificate-oidc-issuer, --policy kernels, --key");
  }
  if (args.policy && *args.policy != "kernels") {
    return usage_error(app, "--policy takes `kernels` (the kernels package's default policy)");
  }
  if (args.allow_no_tlog && !args.key) return usage_error(app, "--allow-no-tlog applies to --key only");

  const auto fail_with = [&](const Error& error) { return fail(kCommand, error, args.json); };
  auto root = trusted_root_in_force(args.root, process_environment());
  if (!root) return fail_with(root.error());
  auto bundle_text = read_file(args.bundle);
  if (!bundle_text) return fail_with(bundle_text.error());
  auto bundle = sigstore::Bundle::parse(*bundle_text);
  if (!bundle) return fail_with(bundle.error().with_context("bundle `" + args.bundle + "`"));
  auto artifact = artifact_of(args.artifact);
  if (!artifact) return fail_with(artifact.error());

  sigstore::VerifyOptions options;
  if (args.key) {
    auto pem = read_file(*args.key);
    if (!pem) return fail_with(pem.error());
    options.public_key_pem = std::move(*pem);
    options.allow_no_tlog_for_keys = args.allow_no_tlog;
  }
  auto verified = sigstore::verify(*bundle, *artifact, *root, options);
  if (!verified) return fail_with(verified.error());
  if (!args.key) {
    sigstore::Policy policy = sigstore::Policy::kernels_default();
    if (by_identity)
      policy = sigstore::IdentityRule{.subject_alternative_name = args.identity, .oidc_issuer = args.issuer};
    if (auto held = sigstore::check_policy(policy, verified->signer); !held) return fail_with(held.error());
  }

  if (args.json) {
    nlohmann::json times = nlohmann::json::array();
    for (const auto& time : verified->times) {
      times.push_back({{"source", source_name(time.source)},
                       {"time", sigstore::to_rfc3339(time.time)},
                       {"authority", time.authority}});
    }
    nlohmann::json out = {{"verified", true},
                          {"bundle_version", std::string(sigstore::to_string(verified->version))},
                          {"signer", signer_json(verified->signer)},
                          {"times", times},
                          {"trusted_root", root->source()}};
    if (verified->log_entry) {
      out["log_entry"] = {{"log", verified->log_entry->log_url},
                          {"index", verified->log_entry->log_index},
                          {"kind", verified->log_entry->kind + " " + verified->log_entry->version}};
    }
    std::printf("%s\n", out.dump(2).c_str());
  } else {
    std::string when;
    for (const auto& time : verified->times) {
      when += (when.empty() ? " at " : ", ") + sigstore::to_rfc3339(time.time) + " (" + time.authority + ")";
    }
    std::printf("verified: %s signed by %s%s\n", args.bundle.c_str(), verified->signer.describe().c_str(),
                when.c_str());
  }
  return kExitOk;
}

CommandRun define_verify_bundle(CLI::App& app) {
  auto args = std::make_shared<VerifyBundleArguments>();
  app.description(
      "Verify a Sigstore bundle over an artifact, offline: the signing certificate chains to a Fulcio\n"
      "CA of the trusted root at the signing time, its SCT, the transparency log entry (inclusion\n"
      "proof, signed checkpoint, inclusion promise) and RFC 3161 timestamps, the signature over the\n"
      "artifact or the DSSE envelope; then that the signer is the one asked for: a certificate\n"
      "identity, the kernels package's default policy (kernels-community's CI), or a managed key.\n"
      "FILE_OR_DIGEST is the artifact, or `sha256:<hex>` (the subject's digest for an in-toto\n"
      "attestation). Speaks the Sigstore conformance suite's `verify-bundle` protocol.");
  add_trusted_root_options(app, args->root, "a trusted_root.json to verify against",
                           "verify against Sigstore's staging instance (embedded root)");
  app.add_option("--bundle", args->bundle, "the bundle to verify")->option_text("FILE")->required();
  app.add_option("--certificate-identity", args->identity, "the SAN the signing certificate must carry")
      ->option_text("IDENTITY");
  app.add_option("--certificate-oidc-issuer", args->issuer, "the OIDC issuer the signing certificate must name")
      ->option_text("URL");
  app.add_option("--policy", args->policy,
                 "`kernels`: the kernels package's default policy (kernels-community's GitHub workflows)")
      ->option_text("kernels");
  app.add_option("--key", args->key, "a managed public key (PEM) the bundle must be signed with")
      ->option_text("KEY_FILE");
  app.add_flag("--allow-no-tlog", args->allow_no_tlog,
               "with --key: accept a bundle no transparency log recorded (nothing then proves when it was signed)");
  app.add_flag("--json", args->json,
               "print one JSON object: {\"verified\", \"bundle_version\", \"signer\", \"times\", \"log_entry\", "
               "\"trusted_root\"}");
  app.add_option("FILE_OR_DIGEST", args->artifact, "the artifact, or sha256:<64 hex>")->required();
  return [args, &app] { return run_verify_bundle(*args, app); };
}

}  // namespace

KERNELHUB_SUBCOMMAND("sigstore", "verify-bundle", "verify a Sigstore bundle over an artifact, offline",
                     &define_verify_bundle);

}  // namespace kernelhub::cli
