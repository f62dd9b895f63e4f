#include "kernelhub/signing/internal/sign.hpp"

#include <chrono>

#include "kernelhub/base/internal/atomic_file.hpp"
#include "kernelhub/signing/internal/signature_file.hpp"
#include "kernelhub/signing/internal/variant_files.hpp"

namespace kernelhub::signing {

namespace fs = std::filesystem;

namespace {

std::uint64_t unix_seconds() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

}  // namespace

Result<Manifest> sign_variant(const fs::path& dir, const VariantIdentity& identity, const PrivateKey& key,
                              const SignOptions& options) {
  Manifest manifest{identity, options.serial.value_or(unix_seconds()), {}};
  if (auto valid = manifest.validate(); !valid) {
    return unexpected(valid.error().with_context("cannot sign `" + dir.string() + "`"));
  }
  KH_ASSIGN_OR_RETURN(VariantFiles listed, hash_variant_files(dir));
  std::erase_if(listed.files, [](const ManifestFile& f) { return f.path == kV1SignatureFileName; });
  if (!listed.problems.empty()) {
    std::string message = "cannot sign `" + dir.string() + "`: a signed variant holds regular files with plain names:";
    for (const auto& problem : listed.problems) message += "\n  - " + problem;
    message += "\nReplace links with the files they point to and remove the rest, then sign again.";
    return unexpected(ErrorCode::kInvalidArgument, message);
  }
  manifest.files = std::move(listed.files);
  const std::string bytes = manifest.to_bytes();
  const SignatureFile file{key.public_key().key_id(), key.sign(bytes), bytes};
  KH_RETURN_IF_ERROR(write_file_atomic(signature_path(dir), file.to_bytes()));
  std::error_code ec;
  if (fs::remove(legacy_signature_path(dir), ec); ec) {
    return unexpected(os_error("signed, but cannot remove the old `" + legacy_signature_path(dir).string() +
                                   "` (kernels refuses the folder while it is there)",
                               ec.value()));
  }
  return manifest;
}

}  // namespace kernelhub::signing
