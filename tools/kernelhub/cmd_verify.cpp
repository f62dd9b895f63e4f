// kernelhub verify DIR --repo ORG/NAME [--version N] [--commit C] [--key PUB] [--require] [--json]: check
// a variant directory the way get_kernel does: its signature first (metadata.json.sigstore, or
// kernelhub's kernelhub.sig of before 2026-12; docs/SIGNING.md), then its files against
// metadata.json's digest. With neither a digest nor an accepted signature, it fails: nothing was
// verified.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "command.hpp"
#include "kernelhub/base/internal/file_digests.hpp"
#include "kernelhub/base/internal/read_file.hpp"
#include "kernelhub/fetch/internal/signature_check.hpp"
#include "kernelhub/fetch/metadata.hpp"
#include "kernelhub/signing/internal/keys.hpp"

namespace kernelhub::cli {

namespace {

constexpr std::string_view kCommand = "kernelhub verify";

struct VerifyArguments {
  std::string dir;
  std::string repo;
  std::optional<int> version;
  std::optional<std::string> commit;
  std::optional<std::string> key;
  bool require = false;
  bool json = false;
};

// --key PUB: a file (PEM or base64) or the base64 itself, accepted for the repo like a trusted key.
Status add_key(SignatureSettings& settings, const std::string& repo, const std::string& text) {
  std::error_code ec;
  const bool file = std::filesystem::exists(text, ec);
  auto key = file ? signing::PublicKey::read(text) : signing::PublicKey::parse(text);
  if (key) {
    KH_RETURN_IF_ERROR(settings.legacy_keys.add(repo, *key, "--key"));
    settings.signers.add(Signer{repo, SigningKey{key->to_pem()}, "--key"});
    return {};
  }
  // Not Ed25519: an ECDSA key as cosign writes it (PEM), for a bundle only.
  if (file) {
    if (auto pem = read_file(text); pem && pem->find("-----BEGIN PUBLIC KEY-----") != std::string::npos) {
      settings.signers.add(Signer{repo, SigningKey{*pem}, "--key"});
      return {};
    }
  }
  return unexpected(key.error().with_context("--key"));
}

// The verdict's words for --json's "signature.status".
std::string_view status_name(SignatureVerdict::Status status) {
  switch (status) {
    case SignatureVerdict::Status::kAccepted: return "accepted";
    case SignatureVerdict::Status::kUnsigned: return "unsigned";
    case SignatureVerdict::Status::kNotAccepted: return "not_accepted";
    case SignatureVerdict::Status::kMalformed: return "malformed";
    case SignatureVerdict::Status::kDoesNotVerify: return "does_not_verify";
    case SignatureVerdict::Status::kMetadataMissing: return "metadata_missing";
  }
  return "unknown";
}

int run_verify(const VerifyArguments& args) {
  const bool json = args.json;
  const std::filesystem::path dir = std::filesystem::path(args.dir).lexically_normal();
  const std::string variant = (dir.has_filename() ? dir : dir.parent_path()).filename().string();
  auto settings = SignatureSettings::from_environment(process_environment(), args.require);
  if (!settings) return fail(kCommand, settings.error(), json);
  if (args.key) {
    if (auto added = add_key(*settings, args.repo, *args.key); !added) return fail(kCommand, added.error(), json);
  }
  // What a kernelhub.sig must name: the version, else the commit.
  const std::string revision = args.version ? "v" + std::to_string(*args.version) : args.commit.value_or("");
  FileDigests digests;  // the signature and the digest read the same files: once
  const SignatureRecords fresh(std::nullopt, nullptr);
  auto verdict = check_signature(dir, args.repo, variant, revision, *settings, fresh, &digests);
  if (!verdict) return fail(kCommand, verdict.error(), json);
  if (auto refused = refuse_unless_accepted(*verdict, args.repo, variant); !refused) {
    return fail(kCommand, refused.error(), json);
  }
  auto metadata = Metadata::read(dir);  // an older build without metadata.json has no digest
  if (!metadata && metadata.error().code != ErrorCode::kNotFound) return fail(kCommand, metadata.error(), json);
  const bool has_digest = metadata && metadata->has_digest;
  if (has_digest) {
    if (auto checked = verify_digest(dir, *metadata, &digests); !checked) return fail(kCommand, checked.error(), json);
  }
  const bool accepted = verdict->status == SignatureVerdict::Status::kAccepted;
  if (!accepted && !has_digest) {
    return fail(kCommand,
                Error{ErrorCode::kMissingSignature,
                      "nothing to check `" + dir.string() +
                          "` against: metadata.json has no digest, and it has no signature accepted for " + args.repo +
                          "; sign it (`kernelhub sign`) and give --key PUB, or set KERNELHUB_TRUSTED_KEYS / the "
                          "signers file (docs/SIGNING.md)"},
                json);
  }
  if (json) {
    nlohmann::json signature = {{"status", status_name(verdict->status)}};
    if (!verdict->signer.empty()) signature["signer"] = verdict->signer;
    if (!verdict->why_not.empty()) signature["why_not"] = verdict->why_not;
    const nlohmann::json out = {
        {"dir", dir.string()},
        {"repo", args.repo},
        {"variant", variant},
        {"digest", {{"checked", has_digest}, {"files", has_digest ? metadata->digest.size() : 0}}},
        {"signature", std::move(signature)}};
    std::printf("%s\n", out.dump(2).c_str());
    return kExitOk;
  }
  const std::string digest_text =
      has_digest ? "digest OK (" + std::to_string(metadata->digest.size()) + " files, metadata.json)"
                 : "no digest in metadata.json";
  std::string signature_text;
  switch (verdict->status) {
    case SignatureVerdict::Status::kAccepted:
      signature_text = "signature OK (" + verdict->signer + ", accepted for " + args.repo + ")";
      break;
    case SignatureVerdict::Status::kNotAccepted:
      signature_text = "signed by " + verdict->signer + ", which is not accepted for " + args.repo + ": " +
                       verdict->why_not + " (get_kernel warns; --require refuses)";
      break;
    default: signature_text = "not signed (get_kernel warns; --require refuses)"; break;
  }
  std::printf("%s: %s; %s\n", dir.c_str(), digest_text.c_str(), signature_text.c_str());
  return kExitOk;
}

CommandRun define_verify(CLI::App& app) {
  auto args = std::make_shared<VerifyArguments>();
  app.description(
      "Check the variant directory DIR as get_kernel does: its signature, DIR/metadata.json.sigstore,\n"
      "must verify (against KERNELHUB_SIGSTORE_TRUSTED_ROOT, else Sigstore's public-good root) and be\n"
      "by a signer accepted for ORG/NAME (the signers file, KERNELHUB_TRUSTED_KEYS or --key; else the\n"
      "kernels package's default policy); a variant signed before 2026-12 (<variant>.kernelhub.sig beside\n"
      "DIR) by a trusted key. Then its files must match metadata.json's digest. An unsigned variant or\n"
      "a signer not accepted is said, and refused with --require; with neither a digest nor an\n"
      "accepted signature, nothing is verified, and verify fails.");
  app.add_option("DIR", args->dir, "the variant directory")->required();
  app.add_option("--repo", args->repo, "the repo the variant should belong to")->option_text("ORG/NAME")->required();
  app.add_option("--version", args->version, "the version a kernelhub.sig should sign")
      ->option_text("N")
      ->transform(whole_number());
  app.add_option("--commit", args->commit, "the source commit a kernelhub.sig should sign")->option_text("C");
  app.add_option("--key", args->key, "also accept this public key (file, or base64) for ORG/NAME")->option_text("PUB");
  app.add_flag("--require", args->require, "fail when DIR is not signed by a signer accepted for ORG/NAME");
  app.add_flag("--json", args->json,
               "print one JSON object: dir, repo, variant, digest {checked, files}, signature {status (accepted, "
               "unsigned, not_accepted, ...), signer, why_not} (on failure: {\"error\": {\"code\", \"message\"}})");
  return [args] { return run_verify(*args); };
}

}  // namespace

KERNELHUB_COMMAND("verify", "check a variant directory's signature and digest as get_kernel does", &define_verify);

}  // namespace kernelhub::cli
