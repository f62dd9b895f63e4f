// kernelhub sign DIR --key KEY [--json]: sign a variant directory before it is published: a
// Sigstore bundle over its metadata.json, DIR/metadata.json.sigstore, as the Hub's own kernels are
// signed, with the publisher's own key (docs/SIGNING.md).
#include <cstdio>
#include <nlohmann/json.hpp>

#include "command.hpp"
#include "kernelhub/base/internal/atomic_file.hpp"
#include "kernelhub/base/internal/read_file.hpp"
#include "kernelhub/fetch/internal/signature_check.hpp"
#include "kernelhub/fetch/metadata.hpp"
#include "kernelhub/sigstore/bundle.hpp"
#include "kernelhub/sigstore/sign.hpp"

namespace kernelhub::cli {

namespace {

constexpr std::string_view kCommand = "kernelhub sign";

struct SignArguments {
  std::string dir;
  std::string key;
  bool json = false;
};

int run_sign(const SignArguments& args) {
  const std::filesystem::path dir = std::filesystem::path(args.dir).lexically_normal();
  // metadata.json's digest is what makes a signature of metadata.json cover the files.
  auto metadata = Metadata::read(dir);
  if (!metadata) return fail(kCommand, metadata.error(), args.json);
  if (!metadata->has_digest) {
    return fail(kCommand,
                Error{ErrorCode::kInvalidArgument,
                      "`" + (dir / "metadata.json").string() +
                          "` records no `digest`, so a signature of it would not cover the variant's files; write "
                          "the digest first (kernel-builder's hash step; hub-publish adds one and can sign with "
                          "--sign-key)"},
                args.json);
  }
  auto check = verify_digest(dir, *metadata);
  if (!check) return fail(kCommand, check.error().with_context("the files do not match metadata.json"), args.json);
  auto key = read_file(args.key);
  if (!key) return fail(kCommand, key.error(), args.json);
  auto bytes = read_file(dir / "metadata.json");
  if (!bytes) return fail(kCommand, bytes.error(), args.json);
  auto bundle = sigstore::sign_with_key(*key, *bytes);
  if (!bundle) return fail(kCommand, bundle.error().with_context("`" + args.key + "`"), args.json);
  const std::filesystem::path out = dir / kSigstoreBundleName;
  if (auto written = write_file_atomic(out, *bundle); !written) return fail(kCommand, written.error(), args.json);
  const auto parsed = sigstore::Bundle::parse(*bundle);
  const std::string hint = parsed && parsed->public_key_hint ? *parsed->public_key_hint : "";
  if (args.json) {
    const nlohmann::json j = {{"bundle", out.string()},
                              {"signs", (dir / "metadata.json").string()},
                              {"key_hint", hint},
                              {"files_covered", metadata->digest.size()}};
    std::printf("%s\n", j.dump(2).c_str());
    return kExitOk;
  }
  std::printf("signed %s: metadata.json (its digest covers %zu files), key hint %s\n", out.c_str(),
              metadata->digest.size(), hint.c_str());
  return kExitOk;
}

CommandRun define_sign(CLI::App& app) {
  auto args = std::make_shared<SignArguments>();
  app.description(
      "Sign the variant directory DIR (e.g. build/torch215-cxx11-cpu-x86_64-linux) with your own key:\n"
      "its files are checked against metadata.json's digest, then metadata.json is signed into\n"
      "DIR/metadata.json.sigstore, a Sigstore bundle of the kind `cosign sign-blob --key` writes (no\n"
      "transparency log), the name the Hub's kernels and the kernels package use. hub-publish uploads\n"
      "it with the folder; users accept the key with KERNELHUB_TRUSTED_KEYS or the signers file\n"
      "(docs/SIGNING.md). Sign after metadata.json is final.");
  app.add_option("DIR", args->dir, "the variant directory")->required();
  app.add_option("--key", args->key,
                 "private key file (PEM): `kernelhub keygen` (Ed25519), or an ECDSA key as cosign's (PKCS#8)")
      ->option_text("KEY")
      ->required();
  app.add_flag("--json", args->json, "print the bundle's path, what it signs and the key's hint as JSON");
  return [args] { return run_sign(*args); };
}

}  // namespace

KERNELHUB_COMMAND("sign", "sign a variant directory (DIR/metadata.json.sigstore) before publishing it", &define_sign);

}  // namespace kernelhub::cli
