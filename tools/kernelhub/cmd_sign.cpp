// kernelhub sign DIR --key KEY --repo ORG/NAME [--version N] [--commit C] [--serial S]: sign a
// variant directory before it is published (docs/SIGNING.md).
#include <cstdio>
#include <nlohmann/json.hpp>

#include "command.hpp"
#include "kernelhub/signing/sign.hpp"
#include "kernelhub/signing/signature_file.hpp"

namespace kernelhub::cli {

namespace {

struct SignArguments {
  std::string dir;
  std::string key;
  signing::VariantIdentity identity;
  std::optional<std::uint64_t> serial;
  bool json = false;
};

int run_sign(const SignArguments& args) {
  const std::filesystem::path dir = std::filesystem::path(args.dir).lexically_normal();
  signing::VariantIdentity identity = args.identity;
  identity.variant = (dir.has_filename() ? dir : dir.parent_path()).filename().string();
  signing::SignOptions options;
  options.serial = args.serial;
  auto key = signing::PrivateKey::read(args.key);
  if (!key) return fail("kernelhub sign", key.error(), args.json);
  auto manifest = signing::sign_variant(dir, identity, *key, options);
  if (!manifest) return fail("kernelhub sign", manifest.error(), args.json);
  const std::string key_id = key->public_key().key_id();
  if (args.json) {
    nlohmann::json files = nlohmann::json::array();
    for (const auto& f : manifest->files)
      files.push_back({{"path", f.path}, {"size", f.size}, {"sha256", to_hex(f.sha256)}});
    const auto& id = manifest->identity;
    nlohmann::json j = {
        {"signature", signing::signature_path(dir).string()},
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
  std::printf("signed %s: %zu files, %s variant %s, key %s, serial %llu\n", signing::signature_path(dir).c_str(),
              manifest->files.size(), identity.repo.c_str(), identity.variant.c_str(), key_id.c_str(),
              static_cast<unsigned long long>(manifest->serial));
  return kExitOk;
}

CommandRun define_sign(CLI::App& app) {
  auto args = std::make_shared<SignArguments>();
  app.description(
      "Sign the variant directory DIR (e.g. build/torch215-cxx11-cpu-x86_64-linux): hash every file,\n"
      "write a manifest naming the repo, version, variant (DIR's name) and source commit, sign it\n"
      "with KEY and store both beside DIR, in <variant>.kernelhub.sig (inside DIR, kernels >= 0.18\n"
      "would refuse the folder). Sign after metadata.json is final; hub-publish uploads it with the\n"
      "folder, as build/<variant>.kernelhub.sig.");
  app.add_option("DIR", args->dir, "the variant directory")->required();
  app.add_option("--key", args->key, "private key file (`kernelhub keygen`, or openssl genpkey -algorithm ed25519)")
      ->option_text("KEY")
      ->required();
  app.add_option("--repo", args->identity.repo, "the repo the variant is published to")
      ->option_text("ORG/NAME")
      ->required();
  app.add_option("--version", args->identity.version, "the version (branch vN) it is published as")
      ->option_text("N")
      ->transform(whole_number());
  app.add_option("--commit", args->identity.source_commit, "the commit of the kernel's source it was built from")
      ->option_text("C");
  app.add_option("--serial", args->serial, "a number that grows with every signing (default: the Unix time)")
      ->option_text("S")
      ->transform(whole_number());
  app.add_flag("--json", args->json, "print the signed manifest's identity and files as JSON");
  return [args] { return run_sign(*args); };
}

}  // namespace

KERNELHUB_COMMAND("sign", "sign a variant directory (<variant>.kernelhub.sig beside it) before publishing it",
                  &define_sign);

}  // namespace kernelhub::cli
