// kernelhub keygen --out PATH: make an Ed25519 key pair for signing variants (docs/SIGNING.md).
#include <cstdio>

#include "command.hpp"
#include "kernelhub/signing/keys.hpp"

namespace kernelhub::cli {

namespace {

int run_keygen(const std::string& out, const CLI::App& app) {
  if (out.empty()) return usage_error(app, "--out PATH must not be empty");
  const std::filesystem::path private_path = out;
  const std::filesystem::path public_path = out + ".pub";
  std::error_code ec;
  constexpr std::string_view kCommand = "kernelhub keygen";
  if (std::filesystem::exists(std::filesystem::symlink_status(public_path, ec))) {
    return fail(
        kCommand,
        Error{ErrorCode::kIo, "`" + public_path.string() + "` already exists; choose another --out or remove it first"},
        false);
  }
  auto key = signing::PrivateKey::generate();
  if (!key) return fail(kCommand, key.error(), false);
  if (auto written = key->write(private_path); !written) return fail(kCommand, written.error(), false);
  const signing::PublicKey public_key = key->public_key();
  if (auto written = signing::write_new_file(public_path, public_key.to_base64() + "\n", 0644); !written) {
    std::filesystem::remove(private_path, ec);  // leave nothing half-made behind
    return fail(kCommand, written.error(), false);
  }
  std::printf("private key: %s\n", private_path.c_str());
  std::printf("public key:  %s\n", public_path.c_str());
  std::printf("key id:      %s\n", public_key.key_id().c_str());
  std::printf("%s\n", public_key.to_base64().c_str());
  return kExitOk;
}

CommandRun define_keygen(CLI::App& app) {
  auto out = std::make_shared<std::string>();
  app.description(
      "Make an Ed25519 key pair for `kernelhub sign` and hub-publish --sign-key. Writes the private\n"
      "key to PATH (PEM, mode 0600; an existing file is never replaced) and the public key to\n"
      "PATH.pub (one line of base64), then prints the public key and its id. Keep PATH secret; give\n"
      "the public key to your users, who trust it with\n"
      "  KERNELHUB_TRUSTED_KEYS=ORG=<public key>   or a line `ORG <public key>` in\n"
      "  ~/.config/kernelhub/trusted_keys");
  app.add_option("--out", *out, "where to write the private key")->option_text("FILE")->required();
  return [out, &app] { return run_keygen(*out, app); };
}

}  // namespace

KERNELHUB_COMMAND("keygen", "make an Ed25519 key pair for signing variants", &define_keygen);

}  // namespace kernelhub::cli
