// kernelhub verify DIR --repo ORG/NAME [--version N] [--commit C] [--key PUB] [--require]: check
// a variant directory the way get_kernel does: its files against metadata.json's digest, and its
// signature (docs/SIGNING.md). With neither a digest nor a key to check, it fails: nothing was
// verified.
#include <cstdio>

#include "command.hpp"
#include "kernelhub/base/file_digests.hpp"
#include "kernelhub/fetch/metadata.hpp"
#include "kernelhub/signing/verify.hpp"

namespace kernelhub::cli {

namespace {

struct VerifyArguments {
  std::string dir;
  signing::ExpectedVariant expected;
  std::optional<std::string> key;
  bool require = false;
};

int run_verify(const VerifyArguments& args) {
  constexpr std::string_view kCommand = "kernelhub verify";
  const std::filesystem::path dir = std::filesystem::path(args.dir).lexically_normal();
  signing::ExpectedVariant expected = args.expected;
  expected.variant = (dir.has_filename() ? dir : dir.parent_path()).filename().string();
  auto policy = signing::VerifyPolicy::from_environment(process_environment(), args.require);
  if (!policy) return fail(kCommand, policy.error(), false);
  if (const auto& key_text = args.key) {
    std::error_code ec;
    auto key = std::filesystem::exists(*key_text, ec) ? signing::PublicKey::read(*key_text)
                                                      : signing::PublicKey::parse(*key_text);
    if (!key) return fail(kCommand, key.error(), false);
    if (auto added = policy->trusted_keys.add(expected.repo, *key, "--key"); !added) {
      return fail(kCommand, added.error(), false);
    }
  }
  // The build's own digest (metadata.json), then the signature: each file read once for both.
  FileDigests digests;
  auto metadata = Metadata::read(dir);  // an older build without metadata.json has no digest
  if (!metadata && metadata.error().code != ErrorCode::kNotFound) return fail(kCommand, metadata.error(), false);
  const bool has_digest = metadata && metadata->has_digest;
  if (has_digest) {
    if (auto checked = verify_digest(dir, *metadata, &digests); !checked) return fail(kCommand, checked.error(), false);
  }
  auto verified = signing::verify_variant(dir, expected, *policy, &digests);
  if (!verified) return fail(kCommand, verified.error(), false);
  const std::string digest_text =
      has_digest ? "digest OK (" + std::to_string(metadata->digest.size()) + " files, metadata.json)"
                 : "no digest in metadata.json";
  if (!verified->signature_checked) {
    if (!has_digest) {
      return fail(kCommand,
                  Error{ErrorCode::kMissingSignature, "nothing to check `" + dir.string() +
                                                          "` against: metadata.json has no digest, and there is "
                                                          "no key trusted for " +
                                                          expected.repo +
                                                          " to check a signature with; give --key PUB or set "
                                                          "KERNELHUB_TRUSTED_KEYS (docs/SIGNING.md)"},
                  false);
    }
    std::printf("%s: %s; signature not checked (no key trusted for %s: give --key PUB or set KERNELHUB_TRUSTED_KEYS)\n",
                dir.c_str(), digest_text.c_str(), expected.repo.c_str());
    return kExitOk;
  }
  std::printf("%s: %s; signature OK (key %s trusted for %s), %zu files, serial %llu\n", dir.c_str(),
              digest_text.c_str(), verified->key_id.c_str(), verified->key_scope.c_str(),
              verified->manifest->files.size(), static_cast<unsigned long long>(verified->manifest->serial));
  return kExitOk;
}

CommandRun define_verify(CLI::App& app) {
  auto args = std::make_shared<VerifyArguments>();
  app.description(
      "Check the variant directory DIR as get_kernel does: its files must match metadata.json's\n"
      "digest, and its signature, <variant>.kernelhub.sig beside DIR (or, signed before 2026-12,\n"
      "DIR/kernelhub.sig), must verify with a key trusted for ORG or ORG/NAME (KERNELHUB_TRUSTED_KEYS,\n"
      "~/.config/kernelhub/trusted_keys, or --key), sign this repo, variant (DIR's name) and version,\n"
      "and cover exactly DIR's files. Without a key the signature is not checked (said so); with\n"
      "neither a digest nor a key, nothing is, and verify fails.");
  app.add_option("DIR", args->dir, "the variant directory")->required();
  app.add_option("--repo", args->expected.repo, "the repo the variant should belong to")
      ->option_text("ORG/NAME")
      ->required();
  app.add_option("--version", args->expected.version, "the version it should be signed for")
      ->option_text("N")
      ->transform(whole_number());
  app.add_option("--commit", args->expected.source_commit, "the source commit it should be signed for")
      ->option_text("C");
  app.add_option("--key", args->key, "also trust this public key (file, or base64) for ORG/NAME")->option_text("PUB");
  app.add_flag("--require", args->require, "fail when DIR is not signed even if no key is configured");
  return [args] { return run_verify(*args); };
}

}  // namespace

KERNELHUB_COMMAND("verify", "check a variant directory's signature as get_kernel does", &define_verify);

}  // namespace kernelhub::cli
