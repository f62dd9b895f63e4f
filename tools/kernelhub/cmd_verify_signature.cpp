// kernelhub verify-signature ORG/NAME VERSION [--all-variants] [--filter-unsigned]
// [--filter-no-digest] [--json]: the kernels package's `kernels verify-signature`, with its meaning
// and its output: the variant for this machine (or every variant) downloaded, its Sigstore bundle
// verified afresh (no record of an earlier verification is used) against the signers accepted for
// the repo (docs/SIGNING.md: its own, else the kernels package's default policy), then its files
// against metadata.json's digest. One line per variant, `✅ VARIANT: ...` or `❌ VARIANT: ...`, in
// kernels' words; exit status 1 when any variant failed.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "checked_download.hpp"
#include "command.hpp"
#include "kernelhub/client/internal/hub_client.hpp"
#include "kernelhub/fetch/internal/signature_check.hpp"
#include "kernelhub/fetch/internal/variant_checks.hpp"
#include "kernelhub/fetch/metadata.hpp"
#include "kernelhub/resolver/internal/closest_miss.hpp"
#include "kernelhub/resolver/select.hpp"
#include "kernels_words.hpp"
#include "selection_environment.hpp"

namespace kernelhub::cli {

namespace {

constexpr std::string_view kCommand = "kernelhub verify-signature";

struct VerifySignatureArguments {
  std::string repo;
  int version = 0;
  bool all_variants = false;
  bool filter_unsigned = false;
  bool filter_no_digest = false;
  bool json = false;
  SelectionFlags selection;
};

// What kernels' SignatureVerificationResult says for a verdict that is not a success.
std::string signature_failure_text(const SignatureVerdict& verdict) {
  using Status = SignatureVerdict::Status;
  switch (verdict.status) {
    case Status::kUnsigned: return "not signed, so its integrity cannot be verified";
    case Status::kMalformed:
      return "the signature bundle is invalid, so its integrity cannot be verified:\n" + verdict.why_not;
    case Status::kMetadataMissing: return "the metadata is missing, so its integrity cannot be verified";
    case Status::kNotAccepted:
      return "the metadata could not be verified against its signature:\n" +
             (verdict.policy_alternatives > 1
                  ? "0 of " + std::to_string(verdict.policy_alternatives) + " policies succeeded"
                  : verdict.why_not);
    case Status::kDoesNotVerify: return "the metadata could not be verified against its signature:\n" + verdict.why_not;
    case Status::kAccepted: break;
  }
  return "the metadata is correctly signed";
}

std::string_view status_name(SignatureVerdict::Status status) {
  using Status = SignatureVerdict::Status;
  switch (status) {
    case Status::kAccepted: return "signed";
    case Status::kUnsigned: return "unsigned";
    case Status::kNotAccepted: return "signer_not_accepted";
    case Status::kMalformed: return "bundle_invalid";
    case Status::kDoesNotVerify: return "does_not_verify";
    case Status::kMetadataMissing: return "metadata_missing";
  }
  return "unsigned";
}

// One variant: its line (none when filtered out), whether it failed, and its JSON.
struct VariantReport {
  std::optional<std::string> line;
  bool failed = false;
  nlohmann::json json;
};

Result<VariantReport> verify_one(const std::filesystem::path& dir, const std::string& repo, const std::string& variant,
                                 const std::string& commit, const SignatureSettings& settings,
                                 const VerifySignatureArguments& args) {
  VariantReport report;
  // Always a full verification here, as kernels' command does (`cache=False`).
  const SignatureRecords fresh(std::nullopt, nullptr);
  FileDigests digests;
  KH_ASSIGN_OR_RETURN(const SignatureVerdict verdict,
                      check_signature(dir, repo, variant, commit, settings, fresh, &digests));
  using Status = SignatureVerdict::Status;
  report.json = {{"variant", variant},
                 {"path", dir.string()},
                 {"signature", {{"status", status_name(verdict.status)}, {"signer", verdict.signer}}}};
  if ((verdict.status == Status::kUnsigned && args.filter_unsigned) ||
      (verdict.status == Status::kMetadataMissing && args.filter_no_digest)) {
    report.json["skipped"] = true;
    return report;
  }
  const std::string signature_text = signature_failure_text(verdict);
  report.json["signature"]["message"] = signature_text;
  if (verdict.status != Status::kAccepted) {
    report.line = "❌ " + variant + ": " + signature_text;
    report.failed = true;
    return report;
  }
  KH_ASSIGN_OR_RETURN(const Metadata metadata, Metadata::read(dir));
  if (!metadata.has_digest) {
    report.json["digest"] = {{"status", "missing"}};
    if (args.filter_no_digest) return report;  // kernels says nothing of it then
    report.line = "❌ " + variant + ": the metadata does not record a digest, so its integrity cannot be verified";
    report.failed = true;
    return report;
  }
  KH_ASSIGN_OR_RETURN(auto actual, compute_digest(dir, metadata.digest_algorithm, &digests));
  const auto violations =
      compare_digests(metadata.digest_algorithm, metadata.digest, metadata.digest_algorithm, actual);
  if (!violations.empty()) {
    std::string listed;
    for (const auto& v : violations) listed += std::string(listed.empty() ? "" : "\n") + kernels_words::describe(v);
    report.line = "❌ " + variant +
                  ": the files do not match the digest in the metadata, so they may have been "
                  "modified:\n" +
                  listed;
    report.failed = true;
    report.json["digest"] = {{"status", "mismatch"}, {"message", listed}};
    return report;
  }
  report.json["digest"] = {{"status", "match"}};
  report.line = "✅ " + variant + ": " + signature_text + " and the files match the digest in the metadata";
  return report;
}

int run_verify_signature(const VerifySignatureArguments& args, const CLI::App& app) {
  auto repo = client::RepoId::parse(args.repo);
  if (!repo) return usage_error(app, repo.error().message);
  const EnvironmentSource env = process_environment();
  std::optional<SelectionEnvironment> selection;
  if (!args.all_variants) {
    auto found = selection_environment(env, args.selection);
    if (!found) return fail(kCommand, found.error(), args.json);
    selection = std::move(*found);
  }
  auto settings = client::Settings::from_env(env);
  if (!settings) return fail(kCommand, settings.error(), args.json);
  auto signature_settings = SignatureSettings::from_environment(env, false);
  if (!signature_settings) return fail(kCommand, signature_settings.error(), args.json);
  const client::HubClient hub(*settings);
  const std::string revision = "v" + std::to_string(args.version);
  auto failed = [&](const Error& error) {
    say_fallbacks(kCommand, hub.fallbacks());
    return fail(kCommand, error, args.json);
  };
  auto commit = hub.resolve_revision(*repo, RepoType::kKernel, revision);
  if (!commit) return failed(commit.error());
  auto names = hub.list_variants(*repo, RepoType::kKernel, *commit);
  if (!names) return failed(names.error());
  std::vector<std::string> variants;
  if (args.all_variants) {
    variants = *names;
  } else {
    const auto decisions = resolver::select(*names, selection->environment, resolver::Loadable::python_process());
    const resolver::Decision* best = resolver::chosen(decisions);
    if (best == nullptr) {
      return failed(
          Error{ErrorCode::kNoCompatibleVariant,
                resolver::no_variant_message("`" + repo->to_string() + "` version " + std::to_string(args.version),
                                             decisions, selection->environment, resolver::Loadable::python_process())});
    }
    variants.push_back(best->name);
  }
  client::DownloadOptions options;
  options.quiet = args.json;
  options.asked_revision = revision;
  bool any_failed = false;
  nlohmann::json reports = nlohmann::json::array();
  for (const std::string& variant : variants) {
    auto snapshot = checked_download(hub, *repo, *commit, variant, options, env);
    if (!snapshot) return failed(snapshot.error());
    auto report = verify_one(snapshot->path, repo->to_string(), variant, *commit, *signature_settings, args);
    if (!report) return failed(report.error());
    any_failed = any_failed || report->failed;
    if (report->line && !args.json) std::printf("%s\n", report->line->c_str());
    reports.push_back(std::move(report->json));
  }
  say_fallbacks(kCommand, hub.fallbacks());
  if (args.json) {
    const nlohmann::json out = {{"repo", repo->to_string()}, {"version", args.version},
                                {"commit", *commit},         {"trusted_root", signature_settings->root_id},
                                {"variants", reports},       {"ok", !any_failed}};
    std::printf("%s\n", out.dump(2).c_str());
  }
  return any_failed ? kExitFailure : kExitOk;
}

CommandRun define_verify_signature(CLI::App& app) {
  auto args = std::make_shared<VerifySignatureArguments>();
  app.description(
      "Verify the Sigstore signature of a kernel version, as `kernels verify-signature` does: the\n"
      "variant for this machine (or every variant) is downloaded, its metadata.json.sigstore is\n"
      "verified afresh against the trusted root (KERNELHUB_SIGSTORE_TRUSTED_ROOT, else Sigstore's\n"
      "public-good instance, embedded) and the signers accepted for the repo (the signers file, else\n"
      "the kernels package's default policy: kernels-community's build workflows), then its files\n"
      "against metadata.json's digest. Prints `✅ VARIANT: ...` or `❌ VARIANT: ...` per variant and\n"
      "exits 1 when any failed. Never touches the network beyond the Hub (no TUF, no Rekor).");
  app.add_option("ORG/NAME", args->repo, "the kernel repo")->required();
  app.add_option("VERSION", args->version, "the kernel version to verify (branch vVERSION)")
      ->required()
      ->transform(whole_number());
  app.add_flag("--all-variants", args->all_variants, "every build variant, not only the one for this machine");
  app.add_flag("--filter-unsigned", args->filter_unsigned, "skip unsigned variants");
  app.add_flag("--filter-no-digest", args->filter_no_digest, "skip variants without a digest in the metadata");
  add_selection_options(app, args->selection);
  app.add_flag("--json", args->json,
               "print one JSON object: repo, version, commit, trusted_root, variants (each: variant, path, "
               "signature {status, signer, message}, digest {status}, skipped), ok");
  return [args, &app] { return run_verify_signature(*args, app); };
}

}  // namespace

KERNELHUB_COMMAND("verify-signature", "verify the Sigstore signature of a kernel version, as kernels does",
                  &define_verify_signature);

}  // namespace kernelhub::cli
