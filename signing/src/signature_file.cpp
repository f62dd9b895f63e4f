#include "kernelhub/signing/internal/signature_file.hpp"

#include <algorithm>

#include "kernelhub/base/internal/base64.hpp"
#include "kernelhub/signing/internal/keys.hpp"

namespace kernelhub::signing {

namespace {

Unexpected malformed(std::string_view why) {
  return unexpected(ErrorCode::kBadSignature, std::string("the signature file is malformed: ") + std::string(why) +
                                                  ". It was damaged or tampered with; download the variant again, or "
                                                  "ask the publisher to sign it again");
}

}  // namespace

std::filesystem::path signature_path(const std::filesystem::path& variant_dir) {
  std::filesystem::path dir = variant_dir.lexically_normal();
  if (!dir.has_filename()) dir = dir.parent_path();
  if (dir.empty() || dir.filename() == "." || dir.filename() == "..") {
    dir = std::filesystem::absolute(dir).lexically_normal();
    if (!dir.has_filename()) dir = dir.parent_path();
  }
  return dir.parent_path() / (dir.filename().string() + std::string(kSignatureSuffix));
}

std::filesystem::path legacy_signature_path(const std::filesystem::path& variant_dir) {
  return variant_dir / kV1SignatureFileName;
}

std::string signature_repo_path(std::string_view variant) {
  return "build/" + std::string(variant) + std::string(kSignatureSuffix);
}

std::string SignatureFile::to_bytes() const {
  return std::string(kSignatureTag) + ' ' + key_id + ' ' + base64_encode(signature) + '\n' + manifest_bytes;
}

Result<SignatureFile> SignatureFile::parse(std::string_view bytes) {
  const std::size_t newline = bytes.find('\n');
  // tag + space + 16 hex + space + 88 base64 characters: the first line has one exact length.
  constexpr std::size_t kLineSize = kSignatureTag.size() + 1 + 16 + 1 + 88;
  if (!bytes.starts_with(kSignatureTag)) {
    return malformed("it does not start with `" + std::string(kSignatureTag) + "`");
  }
  if (newline != kLineSize || bytes[kSignatureTag.size()] != ' ' || bytes[kSignatureTag.size() + 17] != ' ') {
    return malformed("its first line is not `" + std::string(kSignatureTag) + " <key id> <signature>`");
  }
  const std::string_view line = bytes.substr(0, newline);
  SignatureFile out;
  out.key_id = std::string(line.substr(kSignatureTag.size() + 1, 16));
  if (!std::all_of(out.key_id.begin(), out.key_id.end(),
                   [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); })) {
    return malformed("the key id is not 16 lower-case hex digits");
  }
  auto signature = base64_decode(line.substr(kSignatureTag.size() + 18));
  if (!signature || signature->size() != kSignatureSize) {
    return malformed("the signature is not the base64 of 64 bytes");
  }
  out.signature = std::move(*signature);
  out.manifest_bytes = std::string(bytes.substr(newline + 1));
  return out;
}

}  // namespace kernelhub::signing
