// kernelhub keygen --out PATH [--json]: make an Ed25519 key pair for signing variants
// (docs/SIGNING.md).
#include <cstdio>
#include <nlohmann/json.hpp>

#include "command.hpp"
#include "kernelhub/signing/internal/keys.hpp"

namespace kernelhub::cli {

namespace {

struct KeygenArguments {
  std::string out;
  bool json = false;
};

int run_keygen(const KeygenArguments& args, const CLI::App& app) {
  const std::string& out = args.out;
  const bool json = args.json;
  if (out.empty()) return usage_error(app, "--out PATH must not be empty");
  const std::filesystem::path private_path = out;
  const std::filesystem::path public_path = out + ".pub";
  std::error_code ec;
  constexpr std::string_view kCommand = "kernelhub keygen";
  if (std::filesystem::exists(std::filesystem::symlink_status(public_path, ec))) {
    return fail(
        kCommand,
        Error{ErrorCode::kIo, "`" + public_path.string() + "` already exists; choose another --out or remove it first"},
        json);
  }
  auto key = signing::PrivateKey::generate();
  if (!key) return fail(kCommand, key.error(), json);
  if (auto written = key->write(private_path); !written) return fail(kCommand, written.error(), json);
  const signing::PublicKey public_key = key->public_key();
  if (auto written = signing::write_new_file(public_path, public_key.to_base64() + "\n", 0644); !written) {
    std::filesystem::remove(private_path, ec);  // leave nothing half-made behind
    return fail(kCommand, written.error(), json);
  }
  if (json) {
    std::printf("%s\n", nlohmann::json{{"private_key", private_path.string()},
                                       {"public_key", public_path.string()},
                                       {"key_id", public_key.key_id()},
                                       {"public_key_base64", public_key.to_base64()}}
                            .dump(2)
                            .c_str());
    return kExitOk;
  }
  std::printf("private key: %s\n", private_path.c_str());
  std::printf("public key:  %s\n", public_path.c_str());
  std::printf("key id:      %s\n", public_key.key_id().c_str());
  std::printf("%s\n", public_key.to_base64().c_str());
  return kExitOk;
}

CommandRun define_keygen(CLI::App& app) {
  auto args = std::make_shared<KeygenArguments>();
  app.description(
      "Make an Ed25519 key pair for `kernelhub sign` and hub-publish --sign-key. Writes the private\n"
      "key to PATH (PEM, mode 0600; an existing file is never replaced) and the public key to\n"
      "PATH.pub (one line of base64), then prints the public key and its id. Keep PATH secret; give\n"
      "the public key to your users, who trust it with\n"
      "  KERNELHUB_TRUSTED_KEYS=ORG=<public key>   or a line `ORG <public key>` in\n"
      "  ~/.config/kernelhub/trusted_keys");
  app.add_option("--out", args->out, "where to write the private key")->option_text("FILE")->required();
  app.add_flag("--json", args->json,
               "print one JSON object: private_key, public_key (their paths), key_id, public_key_base64 (on "
               "failure: {\"error\": {\"code\", \"message\"}})");
  return [args, &app] { return run_keygen(*args, app); };
}

}  // namespace

KERNELHUB_COMMAND("keygen", "make an Ed25519 key pair for signing variants", &define_keygen);

}  // namespace kernelhub::cli
