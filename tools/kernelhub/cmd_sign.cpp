// kernelhub sign DIR --key KEY --repo ORG/NAME [--version N] [--commit C] [--serial S]: sign a
// variant directory before it is published (docs/SIGNING.md).
#include <cstdio>
#include <nlohmann/json.hpp>

#include "arguments.hpp"
#include "command.hpp"
#include "kernelhub/signing/sign.hpp"
#include "kernelhub/signing/signature_file.hpp"

namespace kernelhub::cli {

namespace {

constexpr const char* kHelp =
    "usage: kernelhub sign DIR --key KEY --repo ORG/NAME [--version N] [--commit C] [--serial S] [--json]\n\n"
    "Sign the variant directory DIR (e.g. build/torch215-cxx11-cpu-x86_64-linux): hash every file,\n"
    "write a manifest naming the repo, version, variant (DIR's name) and source commit, sign it\n"
    "with KEY and store both in DIR/kernelhub.sig. Sign after metadata.json is final; publish\n"
    "kernelhub.sig with the other files.\n\n"
    "options:\n"
    "  --key KEY        private key file (`kernelhub keygen`, or openssl genpkey -algorithm ed25519)\n"
    "  --repo ORG/NAME  the repo the variant is published to\n"
    "  --version N      the version (branch vN) it is published as\n"
    "  --commit C       the commit of the kernel's source it was built from\n"
    "  --serial S       a number that grows with every signing (default: the Unix time)\n"
    "  --json           print the signed manifest's identity and files as JSON\n";

std::optional<std::uint64_t> parse_number(const std::string& text) {
  try {
    std::size_t used = 0;
    const unsigned long long value = std::stoull(text, &used);
    if (used != text.size() || text.empty() || text[0] == '-') return std::nullopt;
    return value;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

int run_sign(std::span<const std::string> args) {
  const Arguments parsed =
      parse_arguments(args, {.flags = {"--json"}, .options = {"--key", "--repo", "--version", "--commit", "--serial"}});
  if (parsed.has("--help")) {
    std::fputs(kHelp, stdout);
    return kExitOk;
  }
  auto usage = [](const std::string& why) {
    std::fprintf(stderr, "kernelhub sign: %s\n%s", why.c_str(), kHelp);
    return kExitUsage;
  };
  if (!parsed.error.empty()) return usage(parsed.error);
  if (parsed.positionals.size() != 1) return usage("expected exactly one variant directory");
  if (!parsed.option("--key")) return usage("--key KEY is required");
  if (!parsed.option("--repo")) return usage("--repo ORG/NAME is required");
  const std::filesystem::path dir = std::filesystem::path(parsed.positionals[0]).lexically_normal();
  signing::VariantIdentity identity;
  identity.repo = *parsed.option("--repo");
  identity.variant = (dir.has_filename() ? dir : dir.parent_path()).filename().string();
  identity.source_commit = parsed.option("--commit").value_or("");
  if (auto v = parsed.option("--version")) {
    const auto n = parse_number(*v);
    if (!n || *n > 1'000'000'000) return usage("--version takes a non-negative integer, not `" + *v + "`");
    identity.version = static_cast<int>(*n);
  }
  signing::SignOptions options;
  if (auto s = parsed.option("--serial")) {
    options.serial = parse_number(*s);
    if (!options.serial) return usage("--serial takes a non-negative integer, not `" + *s + "`");
  }
  auto key = signing::PrivateKey::read(*parsed.option("--key"));
  if (!key) {
    std::fprintf(stderr, "kernelhub sign: error: %s\n", key.error().message.c_str());
    return kExitFailure;
  }
  auto manifest = signing::sign_variant(dir, identity, *key, options);
  if (!manifest) {
    std::fprintf(stderr, "kernelhub sign: error: %s\n", manifest.error().message.c_str());
    return kExitFailure;
  }
  const std::string key_id = key->public_key().key_id();
  if (parsed.has("--json")) {
    nlohmann::json files = nlohmann::json::array();
    for (const auto& f : manifest->files)
      files.push_back({{"path", f.path}, {"size", f.size}, {"sha256", to_hex(f.sha256)}});
    const auto& id = manifest->identity;
    nlohmann::json j = {
        {"signature", (dir / signing::kSignatureFileName).string()},
        {"key_id", key_id},
        {"repo", id.repo},
        {"version", id.version ? nlohmann::json(*id.version) : nlohmann::json(nullptr)},
        {"variant", id.variant},
        {"source_commit", id.source_commit.empty() ? nlohmann::json(nullptr) : nlohmann::json(id.source_commit)},
        {"serial", manifest->serial},
        {"files", files}};
    std::printf("%s\n", j.dump(2).c_str());
    return kExitOk;
  }
  std::printf("signed %s: %zu files, %s variant %s, key %s, serial %llu\n", (dir / signing::kSignatureFileName).c_str(),
              manifest->files.size(), identity.repo.c_str(), identity.variant.c_str(), key_id.c_str(),
              static_cast<unsigned long long>(manifest->serial));
  return kExitOk;
}

}  // namespace

KERNELHUB_COMMAND("sign", "sign a variant directory (kernelhub.sig) before publishing it", &run_sign);

}  // namespace kernelhub::cli
