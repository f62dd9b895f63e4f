// kernelhub verify DIR --repo ORG/NAME [--version N] [--commit C] [--key PUB] [--require]: check
// a variant directory's signature the way get_kernel does (docs/SIGNING.md).
#include <cstdio>

#include "command.hpp"
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
  const std::filesystem::path dir = std::filesystem::path(args.dir).lexically_normal();
  signing::ExpectedVariant expected = args.expected;
  expected.variant = (dir.has_filename() ? dir : dir.parent_path()).filename().string();
  auto fail = [](const Error& error) {
    std::fprintf(stderr, "kernelhub verify: error (%s): %s\n", std::string(to_string(error.code)).c_str(),
                 error.message.c_str());
    return kExitFailure;
  };
  auto policy = signing::VerifyPolicy::from_environment(process_environment(), args.require);
  if (!policy) return fail(policy.error());
  if (const auto& key_text = args.key) {
    std::error_code ec;
    auto key = std::filesystem::exists(*key_text, ec) ? signing::PublicKey::read(*key_text)
                                                      : signing::PublicKey::parse(*key_text);
    if (!key) return fail(key.error());
    if (auto added = policy->trusted_keys.add(expected.repo, *key, "--key"); !added) return fail(added.error());
  }
  auto verified = signing::verify_variant(dir, expected, *policy);
  if (!verified) return fail(verified.error());
  if (!verified->signature_checked) {
    std::printf("%s: not checked (no trusted key for %s; unsigned or signed by an unconfigured key)\n", dir.c_str(),
                expected.repo.c_str());
    return kExitOk;
  }
  std::printf("%s: signature OK (key %s trusted for %s), %zu files, serial %llu\n", dir.c_str(),
              verified->key_id.c_str(), verified->key_scope.c_str(), verified->manifest->files.size(),
              static_cast<unsigned long long>(verified->manifest->serial));
  return kExitOk;
}

CommandRun define_verify(CLI::App& app) {
  auto args = std::make_shared<VerifyArguments>();
  app.description(
      "Check the signature of the variant directory DIR as get_kernel does: <variant>.kernelhub.sig\n"
      "beside DIR (or, signed before 2026-12, DIR/kernelhub.sig) must verify\n"
      "with a key trusted for ORG or ORG/NAME (KERNELHUB_TRUSTED_KEYS, ~/.config/kernelhub/trusted_keys,\n"
      "or --key), sign this repo, variant (DIR's name) and version, and cover exactly DIR's files.");
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
