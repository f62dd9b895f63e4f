// kernelhub keygen --out PATH: make an Ed25519 key pair for signing variants (docs/SIGNING.md).
#include <cstdio>

#include "arguments.hpp"
#include "command.hpp"
#include "kernelhub/signing/keys.hpp"

namespace kernelhub::cli {

namespace {

constexpr const char* kHelp =
    "usage: kernelhub keygen --out PATH\n\n"
    "Make an Ed25519 key pair for `kernelhub sign` and hub-publish --sign-key. Writes the private\n"
    "key to PATH (PEM, mode 0600; an existing file is never replaced) and the public key to\n"
    "PATH.pub (one line of base64), then prints the public key and its id. Keep PATH secret; give\n"
    "the public key to your users, who trust it with\n"
    "  KERNELHUB_TRUSTED_KEYS=ORG=<public key>   or a line `ORG <public key>` in\n"
    "  ~/.config/kernelhub/trusted_keys\n\n"
    "options:\n"
    "  --out PATH   where to write the private key\n";

int run_keygen(std::span<const std::string> args) {
  const Arguments parsed = parse_arguments(args, {.options = {"--out"}});
  if (parsed.has("--help")) {
    std::fputs(kHelp, stdout);
    return kExitOk;
  }
  const auto out = parsed.option("--out");
  if (!parsed.error.empty() || !parsed.positionals.empty() || !out || out->empty()) {
    std::fprintf(stderr, "kernelhub keygen: %s\n%s",
                 !parsed.error.empty()
                     ? parsed.error.c_str()
                     : (!parsed.positionals.empty() ? "unexpected argument" : "--out PATH is required"),
                 kHelp);
    return kExitUsage;
  }
  const std::filesystem::path private_path = *out;
  const std::filesystem::path public_path = *out + ".pub";
  std::error_code ec;
  if (std::filesystem::exists(std::filesystem::symlink_status(public_path, ec))) {
    std::fprintf(stderr, "kernelhub keygen: error: `%s` already exists; choose another --out or remove it first\n",
                 public_path.c_str());
    return kExitFailure;
  }
  auto key = signing::PrivateKey::generate();
  if (!key) {
    std::fprintf(stderr, "kernelhub keygen: error: %s\n", key.error().message.c_str());
    return kExitFailure;
  }
  if (auto written = key->write(private_path); !written) {
    std::fprintf(stderr, "kernelhub keygen: error: %s\n", written.error().message.c_str());
    return kExitFailure;
  }
  const signing::PublicKey public_key = key->public_key();
  if (auto written = signing::write_new_file(public_path, public_key.to_base64() + "\n", 0644); !written) {
    std::filesystem::remove(private_path, ec);  // leave nothing half-made behind
    std::fprintf(stderr, "kernelhub keygen: error: %s\n", written.error().message.c_str());
    return kExitFailure;
  }
  std::printf("private key: %s\n", private_path.c_str());
  std::printf("public key:  %s\n", public_path.c_str());
  std::printf("key id:      %s\n", public_key.key_id().c_str());
  std::printf("%s\n", public_key.to_base64().c_str());
  return kExitOk;
}

}  // namespace

KERNELHUB_COMMAND("keygen", "make an Ed25519 key pair for signing variants", &run_keygen);

}  // namespace kernelhub::cli
