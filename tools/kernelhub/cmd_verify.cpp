// kernelhub verify DIR --repo ORG/NAME [--version N] [--commit C] [--key PUB] [--require]: check
// a variant directory's signature the way get_kernel does (docs/SIGNING.md).
#include <cstdio>

#include "arguments.hpp"
#include "command.hpp"
#include "kernelhub/signing/verify.hpp"

namespace kernelhub::cli {

namespace {

constexpr const char* kHelp =
    "usage: kernelhub verify DIR --repo ORG/NAME [--version N] [--commit C] [--key PUB] [--require]\n\n"
    "Check the signature of the variant directory DIR as get_kernel does: kernelhub.sig must verify\n"
    "with a key trusted for ORG or ORG/NAME (KERNELHUB_TRUSTED_KEYS, ~/.config/kernelhub/trusted_keys,\n"
    "or --key), sign this repo, variant (DIR's name) and version, and cover exactly DIR's files.\n\n"
    "options:\n"
    "  --repo ORG/NAME  the repo the variant should belong to\n"
    "  --version N      the version it should be signed for\n"
    "  --commit C       the source commit it should be signed for\n"
    "  --key PUB        also trust this public key (file, or base64) for ORG/NAME\n"
    "  --require        fail when DIR is not signed even if no key is configured\n";

int run_verify(std::span<const std::string> args) {
  const Arguments parsed =
      parse_arguments(args, {.flags = {"--require"}, .options = {"--repo", "--version", "--commit", "--key"}});
  if (parsed.has("--help")) {
    std::fputs(kHelp, stdout);
    return kExitOk;
  }
  auto usage = [](const std::string& why) {
    std::fprintf(stderr, "kernelhub verify: %s\n%s", why.c_str(), kHelp);
    return kExitUsage;
  };
  if (!parsed.error.empty()) return usage(parsed.error);
  if (parsed.positionals.size() != 1) return usage("expected exactly one variant directory");
  if (!parsed.option("--repo")) return usage("--repo ORG/NAME is required");
  const std::filesystem::path dir = std::filesystem::path(parsed.positionals[0]).lexically_normal();
  signing::ExpectedVariant expected;
  expected.repo = *parsed.option("--repo");
  expected.variant = (dir.has_filename() ? dir : dir.parent_path()).filename().string();
  expected.source_commit = parsed.option("--commit");
  if (auto v = parsed.option("--version")) {
    try {
      std::size_t used = 0;
      expected.version = std::stoi(*v, &used);
      if (used != v->size() || *expected.version < 0) throw std::invalid_argument("");
    } catch (const std::exception&) {
      return usage("--version takes a non-negative integer, not `" + *v + "`");
    }
  }
  auto fail = [](const Error& error) {
    std::fprintf(stderr, "kernelhub verify: error (%s): %s\n", std::string(to_string(error.code)).c_str(),
                 error.message.c_str());
    return kExitFailure;
  };
  auto policy = signing::VerifyPolicy::from_environment(process_environment(), parsed.has("--require"));
  if (!policy) return fail(policy.error());
  if (auto key_text = parsed.option("--key")) {
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

}  // namespace

KERNELHUB_COMMAND("verify", "check a variant directory's signature as get_kernel does", &run_verify);

}  // namespace kernelhub::cli
