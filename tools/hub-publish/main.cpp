// hub-publish: publish a kernel's build variants (DIR/<variant>/) to a Hub repo, checked first,
// in one commit on branch v<N>. See publish.hpp for the order of the steps and
// build_dir_check.hpp for what is checked.
#include <unistd.h>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "build_dir_check.hpp"
#include "cli_app.hpp"
#include "kernelhub/base/environment_source.hpp"
#include "kernelhub/base/internal/read_file.hpp"
#include "kernelhub/client/internal/hub_client.hpp"
#include "kernelhub/fetch/internal/signature_check.hpp"
#include "kernelhub/loader/internal/torch_runtime.hpp"
#include "publish.hpp"
#include "variant_signing.hpp"
#include "zip_staging.hpp"

namespace {

using namespace kernelhub;

using cli::kExitFailure;
using cli::kExitOk;

struct PublishArguments {
  std::string repo;
  std::string build_dir;
  std::optional<int> version;
  std::optional<std::string> branch;
  std::vector<std::string> variants;
  std::string repo_type = "kernel";
  std::optional<std::string> sign_key;
  std::optional<std::string> layout;  // --layout files|zip; default: as built
  std::optional<std::string> card;
  std::optional<std::string> endpoint;
  std::optional<int> retries;
  bool is_private = false;
  bool create = false;
  bool dry_run = false;
  bool json = false;
  bool quiet = false;
};

// The message on stderr; with --json also kernelhub's error object on stdout (error_json.hpp), so
// that a script tells a missing repo from a refused token by its code, not by the wording; the
// exit status of the error's kind, as every kernelhub command (cli_app.hpp).
int fail(const Error& error, bool json) {
  return cli::fail("hub-publish", error, json);
}

// The client's settings: the environment's, with --endpoint and --retries over them.
Result<client::Settings> hub_settings(const PublishArguments& args, const EnvironmentSource& env) {
  KH_ASSIGN_OR_RETURN(client::Settings settings, client::Settings::from_env(env));
  if (args.endpoint) {
    settings.endpoint = *args.endpoint;
    while (settings.endpoint.ends_with('/')) settings.endpoint.pop_back();
  }
  if (args.retries) settings.max_retries = *args.retries;
  return settings;
}

// The branch published to: --branch, else v<--version>, else v<the `version` every metadata.json
// names>; metadata.json files that disagree, or name none, are one more problem of the check.
std::string target_branch(const PublishArguments& args, publish::BuildDirCheck& check) {
  if (args.branch) return *args.branch;
  if (args.version) return "v" + std::to_string(*args.version);
  std::optional<int> found;
  for (const auto& v : check.variants) {
    if (!v.metadata_version) continue;
    if (found && *found != *v.metadata_version) {
      check.problems.push_back("the variants' metadata.json disagree on `version` (" + std::to_string(*found) +
                               " and " + std::to_string(*v.metadata_version) + "); pass --version N");
      break;
    }
    found = v.metadata_version;
  }
  if (!found && check.problems.empty()) check.problems.push_back("no metadata.json has a `version`; pass --version N");
  return found ? "v" + std::to_string(*found) : std::string();
}

// A staging folder outside the build dir, made on first use: publishing never writes into it.
Status ensure_staging(std::optional<publish::StagingFolder>& staging) {
  if (staging) return {};
  KH_ASSIGN_OR_RETURN(publish::StagingFolder created, publish::StagingFolder::create());
  staging.emplace(std::move(created));
  return {};
}

// The layout asked for (--layout): a files-layout build is staged as a zip layout outside the
// build dir. What cannot be staged is a problem of the check; the error is a staging folder that
// cannot be made.
Status stage_asked_layout(const PublishArguments& args, publish::BuildDirCheck& check,
                          std::optional<publish::StagingFolder>& staging) {
  for (auto& v : check.variants) {
    if (!args.layout || *args.layout == to_string(v.layout) || !check.problems.empty()) continue;
    if (v.layout == BuildLayout::kZip) {
      check.problems.push_back(v.name + ": built in the zip layout; publish it as built (leave out --layout files)");
      continue;
    }
    KH_RETURN_IF_ERROR(ensure_staging(staging));
    const bool was_signed = v.bundle.has_value();
    if (auto staged = publish::stage_zip_layout(v, staging->path()); !staged) {
      check.problems.push_back(staged.error().message);
    } else if (was_signed && !args.sign_key) {
      check.problems.push_back(v.name +
                               ": its metadata.json.sigstore signs the files layout's metadata.json, not the zip "
                               "layout's published; pass --sign-key KEY to sign what is published");
    }
  }
  return {};
}

// Every problem the check found, in one error: nothing was published.
Error refusal(const publish::BuildDirCheck& check, const std::filesystem::path& build_dir) {
  std::string message =
      "nothing was published; " + std::to_string(check.problems.size()) + " problem(s) in " + build_dir.string() + ":";
  for (const auto& p : check.problems) message += "\n  " + p;
  return Error{ErrorCode::kInvalidArgument, message};
}

// Once every check passed: the digests the variants' metadata.json lacked.
Status add_digests(const publish::BuildDirCheck& check) {
  for (const auto& v : check.variants) {
    if (!v.digest_added) continue;
    if (auto added = publish::add_digest(v.dir); !added) return unexpected(added.error().with_context(v.name));
  }
  return {};
}

// --sign-key: a bundle per variant, staged outside the build folder; one the branch publishes
// now is kept where it still signs these bytes with this key.
Status sign_for_publishing(const std::string& key, const client::Settings& settings, const client::RepoId& repo,
                           RepoType type, const std::string& branch, publish::BuildDirCheck& check,
                           std::optional<publish::StagingFolder>& staging) {
  const client::HubClient reader(settings);
  const auto published = [&](const std::string& variant) -> std::optional<std::string> {
    auto file = reader.download_file(repo, type, branch, "build/" + variant + "/" + std::string(kSigstoreBundleName));
    if (!file) return std::nullopt;
    auto bytes = read_file(file->path);
    return bytes ? std::optional(std::move(*bytes)) : std::nullopt;
  };
  KH_RETURN_IF_ERROR(ensure_staging(staging));
  return publish::sign_variants(key, staging->path(), check.variants, published);
}

// --json: what was checked, sent and committed, as one object on stdout.
void print_json(const publish::PublishReport& report, const publish::BuildDirCheck& check, const client::RepoId& repo,
                RepoType type, bool dry_run) {
  nlohmann::json files = nlohmann::json::array();
  for (const auto& f : report.files) files.push_back({{"path", f.path}, {"size", f.size}, {"action", f.action}});
  nlohmann::json variants = nlohmann::json::array();
  for (const auto& v : check.variants) {
    variants.push_back({{"name", v.name},
                        {"files", v.files.size()},
                        {"preflight", v.preflight},
                        {"digest_added", v.digest_added},
                        {"dirty_build", v.dirty_build},
                        {"layout", std::string(to_string(v.layout))},
                        {"signed", v.bundle.has_value()}});
  }
  nlohmann::json out = {{"repo", repo.to_string()},   {"repo_type", std::string(to_string(type))},
                        {"branch", report.branch},    {"dry_run", dry_run},
                        {"variants", variants},       {"files", files},
                        {"bytes", report.bytes_total}};
  if (!dry_run) {
    out["commit"] = report.commit;
    out["commit_url"] = report.commit_url;
    out["url"] = report.url;
    out["committed"] = report.committed;
    out["branch_created"] = report.branch_created;
    out["card_commit"] = report.card_commit;
    out["lfs"] = {{"objects_sent", report.lfs.objects_sent},
                  {"objects_present", report.lfs.objects_present},
                  {"bytes_sent", report.lfs.bytes_sent},
                  {"multipart_objects", report.lfs.multipart_objects}};
  }
  std::printf("%s\n", out.dump(2).c_str());
}

// Without --json: a line per variant, then what was (or would be) published.
void print_summary(const publish::PublishReport& report, const publish::BuildDirCheck& check,
                   const client::RepoId& repo, const std::string& branch, bool dry_run) {
  for (const auto& v : check.variants) {
    std::printf("  %-40s %3zu files  %s layout%s  pre-flight: %s%s%s\n", v.name.c_str(), v.files.size(),
                std::string(to_string(v.layout)).c_str(), v.bundle ? ", signed" : "", v.preflight.c_str(),
                v.digest_added ? "  (digest added)" : "",
                v.dirty_build ? "  (built from a dirty tree: kernels warns on load)" : "");
  }
  int changed = 0;
  for (const auto& f : report.files) changed += f.action != "unchanged";
  if (dry_run) {
    std::printf("dry run: would publish %zu files (%s) of %zu variant(s) to %s@%s; nothing was sent\n",
                report.files.size(),
                client::ProgressReporter::format_bytes(static_cast<double>(report.bytes_total)).c_str(),
                check.variants.size(), repo.to_string().c_str(), branch.c_str());
    return;
  }
  if (report.committed) {
    std::printf("published %d changed file(s) of %zu variant(s) to %s@%s (%d LFS object(s) sent, %d already there)\n",
                changed, check.variants.size(), repo.to_string().c_str(), branch.c_str(), report.lfs.objects_sent,
                report.lfs.objects_present);
  } else {
    std::printf("%s@%s is already up to date: no new commit\n", repo.to_string().c_str(), branch.c_str());
  }
  std::printf("commit %s\n%s\n", report.commit.c_str(), report.commit_url.c_str());
}

int run(const PublishArguments& args, const CLI::App& app) {
  auto repo = client::RepoId::parse(args.repo);
  if (!repo) return cli::usage_error(app, repo.error().message);
  const RepoType type = args.repo_type == "model" ? RepoType::kModel : RepoType::kKernel;
  const bool json = args.json;
  const bool dry_run = args.dry_run;

  const EnvironmentSource env = process_environment();
  auto settings = hub_settings(args, env);
  if (!settings) return fail(settings.error(), json);

  // Check everything first; nothing leaves the machine when something is wrong.
  const std::filesystem::path build_dir = args.build_dir;
  auto environment = resolver::Environment::detect(loader::torch_runtime(), env);
  // Digests are written only once every check passed, so a refused run changes nothing.
  publish::CheckOptions options{args.version,  /*write_digest=*/false,    environment ? &*environment : nullptr,
                                args.variants, args.sign_key.has_value(), env};
  publish::BuildDirCheck check = publish::check_build_dir(build_dir, options);
  const std::string branch = target_branch(args, check);
  std::optional<std::filesystem::path> card;
  if (const auto& c = args.card) {
    if (!std::filesystem::is_regular_file(*c)) check.problems.push_back("--card " + *c + ": no such file");
    card = *c;
  }
  std::optional<publish::StagingFolder> staging;
  if (auto staged = stage_asked_layout(args, check, staging); !staged) return fail(staged.error(), json);
  if (!args.sign_key) publish::check_bundles(check.variants, env, check.problems);
  if (!check.problems.empty()) return fail(refusal(check, build_dir), json);

  if (!dry_run) {
    if (auto added = add_digests(check); !added) return fail(added.error(), json);
  }
  if (const auto& key = args.sign_key) {
    if (dry_run) {
      std::fprintf(stderr, "hub-publish: dry run: the variants would be signed with %s\n", key->c_str());
    } else if (auto signed_ok = sign_for_publishing(*key, *settings, *repo, type, branch, check, staging); !signed_ok) {
      return fail(signed_ok.error(), json);
    }
  }

  publish::PublishRequest request{*repo, type, branch, args.is_private, args.create, dry_run, check.variants, card};
  client::HubUploader hub(*settings, client::make_curl_transport());
  auto progress = client::ProgressReporter::for_terminal(args.quiet || json);
  auto report = publish::publish(request, hub, progress);
  if (!report) return fail(report.error(), json);
  if (json) {
    print_json(*report, check, *repo, type, dry_run);
  } else {
    print_summary(*report, check, *repo, branch, dry_run);
  }
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app(
      "Publish the build variants in DIR/<variant>/ to a Hub repo: every variant is checked first\n"
      "(name, metadata.json, digest, loader pre-flight; nothing is sent when anything is wrong), then\n"
      "all of them go to branch v<N> in ONE commit. Publishing identical content makes no commit; a\n"
      "cut upload is finished by running the command again. Uses HF_TOKEN and HF_ENDPOINT.",
      "hub-publish");
  cli::apply_conventions(app);
  app.footer(
      "exit status, the same kinds as every kernelhub command (docs/CLI.md):\n"
      "  0  published, already up to date, or a dry run\n"
      "  1  another failure (the disk)\n"
      "  2  bad usage, or a build directory that does not pass its checks (nothing was sent)\n"
      "  3  not found: the repo (without --create), the branch, the --sign-key or --card file\n"
      "  5  the Hub could not be reached, or kept failing\n"
      "  7  access refused: no token, or one that may not write to the repo\n"
      "  9  an answer or an upload that is not what it should be");
  PublishArguments args;
  app.add_option("ORG/NAME", args.repo, "the Hub repo to publish to")->required();
  app.add_option("--build-dir", args.build_dir,
                 "folder holding the <variant>/ folders (CMake's local builds for this torch: build/kernels/build; "
                 "the Nix matrix: kernels/build, nix/README.md)")
      ->option_text("DIR")
      ->required();
  app.add_option("--variant", args.variants,
                 "publish only this <variant>/ folder of DIR (repeatable; default: every folder, and all must pass)")
      ->option_text("NAME")
      ->expected(1)
      ->take_all();
  auto* version = app.add_option("--version", args.version, "publish to branch vN (default: metadata.json `version`)")
                      ->option_text("N")
                      ->transform(cli::whole_number());
  auto* branch = app.add_option("--branch", args.branch, "publish to branch B instead")->option_text("B");
  version->excludes(branch);
  app.add_option("--repo-type", args.repo_type, "kernel (default) or model")
      ->option_text("T")
      ->check(CLI::IsMember({"kernel", "model"}));
  app.add_flag("--private", args.is_private, "create the repo private (with --create)");
  app.add_flag("--create", args.create, "create the repo when it does not exist");
  app.add_option("--sign-key", args.sign_key,
                 "sign each variant's metadata.json with this private key (PEM: Ed25519 from `kernelhub keygen`, or "
                 "ECDSA as cosign's): a Sigstore bundle, build/<variant>/metadata.json.sigstore, staged outside DIR "
                 "(docs/SIGNING.md)")
      ->option_text("KEY");
  app.add_option("--layout", args.layout,
                 "publish the variants in this build layout: files (the Python package's files in the folder) or "
                 "zip (the package as <id>.zip beside the libraries, which kernels >= 0.19 imports); default: as "
                 "built, files for kernel-builder's default and this project's CMake build")
      ->option_text("L")
      ->check(CLI::IsMember({"files", "zip"}));
  app.add_option("--card", args.card, "the kernel card, committed to main as README.md when it changed")
      ->option_text("FILE");
  app.add_option("--endpoint", args.endpoint, "the Hub (default: HF_ENDPOINT, else https://huggingface.co)")
      ->option_text("URL");
  app.add_flag("--dry-run", args.dry_run, "check and print the plan; send nothing");
  app.add_flag("--json", args.json,
               "print one JSON object (commit, url, files, ...) on stdout; on failure {\"error\": {\"code\", "
               "\"message\"[, \"missing\"]}}, as kernelhub --json does");
  app.add_flag("--quiet", args.quiet, "no progress line");
  app.add_option("--retries", args.retries, "retries of each upload request after a network error (default 5)")
      ->option_text("N")
      ->transform(cli::whole_number());
  if (auto status = cli::parse(app, argc, argv)) return *status;
  try {
    return run(args, app);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hub-publish: error: %s\n", printable(e.what()).c_str());
    return kExitFailure;
  }
}
