#include "kernelhub/sigstore/internal/checkpoint.hpp"

#include <charconv>

#include "kernelhub/base/internal/hex.hpp"
#include "kernelhub/sigstore/internal/protobuf_json.hpp"

namespace kernelhub::sigstore {

namespace {

constexpr std::string_view kEmDash = "\xe2\x80\x94";  // U+2014, which starts every signature line

Error malformed(std::string what) {
  return Error{ErrorCode::kCorruptFile, "the checkpoint " + std::move(what)};
}
Error refuse(std::string what) {
  return Error{ErrorCode::kBadSignature, "the checkpoint " + std::move(what)};
}

std::vector<std::string_view> lines_of(std::string_view text) {  // REQUIRES: text ends with '\n'
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const auto end = text.find('\n');
    lines.push_back(text.substr(0, end));
    text.remove_prefix(end + 1);
  }
  return lines;
}

bool is_digits(std::string_view text) {
  return !text.empty() && text.find_first_not_of("0123456789") == std::string_view::npos;
}

}  // namespace

Result<Checkpoint> parse_checkpoint(std::string_view envelope) {
  const auto blank = envelope.find("\n\n");
  if (blank == std::string_view::npos) {
    return unexpected(malformed("has no blank line between its note and its signatures"));
  }
  Checkpoint out;
  out.note = std::string(envelope.substr(0, blank + 1));
  const std::string_view signatures = envelope.substr(blank + 2);
  if (signatures.empty() || signatures.back() != '\n') {
    return unexpected(malformed("does not end its signature lines with a newline"));
  }
  for (const auto line : lines_of(signatures)) {
    if (!line.starts_with(kEmDash) || line.size() <= kEmDash.size() || line[kEmDash.size()] != ' ') {
      return unexpected(malformed("has a line that is not a signature (`— <name> <signature>`): `" +
                                  std::string(line.substr(0, 60)) + "`"));
    }
    const auto rest = line.substr(kEmDash.size() + 1);
    const auto space = rest.find(' ');
    if (space == 0 || space == std::string_view::npos || rest.find(' ', space + 1) != std::string_view::npos) {
      return unexpected(malformed("has a signature line that is not `— <name> <signature>`: `" +
                                  std::string(line.substr(0, 60)) + "`"));
    }
    const auto decoded = protobuf_json::decode_base64(rest.substr(space + 1));
    if (!decoded || decoded->size() < 5) {
      return unexpected(malformed("has a signature of `" + std::string(rest.substr(0, space)) +
                                  "` that is not base64 of a key hint and a signature"));
    }
    out.signatures.push_back(
        NoteSignature{std::string(rest.substr(0, space)), decoded->substr(0, 4), decoded->substr(4)});
  }
  const auto lines = lines_of(out.note);
  if (lines.size() < 3) return unexpected(malformed("note has fewer than three lines (origin, size, root hash)"));
  for (const auto line : lines) {
    if (line.empty()) return unexpected(malformed("note has an empty line"));
  }
  out.origin = std::string(lines[0]);
  if (!is_digits(lines[1]) ||
      std::from_chars(lines[1].data(), lines[1].data() + lines[1].size(), out.tree_size).ec != std::errc()) {
    return unexpected(
        malformed("note's second line, `" + std::string(lines[1].substr(0, 40)) + "`, is not a tree size"));
  }
  const auto root = protobuf_json::decode_base64(lines[2]);
  if (!root || root->size() != 32) {
    return unexpected(malformed("note's third line, `" + std::string(lines[2].substr(0, 60)) +
                                "`, is not the base64 of a 32-byte root hash"));
  }
  out.root_hash = *root;
  for (std::size_t i = 3; i < lines.size(); ++i) out.other_lines.emplace_back(lines[i]);
  return out;
}

std::string log_name(std::string_view base_url) {
  auto rest = base_url;
  if (const auto scheme = rest.find("://"); scheme != std::string_view::npos) rest.remove_prefix(scheme + 3);
  rest = rest.substr(0, rest.find_first_of("/?#"));
  if (const auto at = rest.rfind('@'); at != std::string_view::npos) rest.remove_prefix(at + 1);
  return std::string(rest);
}

Status verify_checkpoint(const Checkpoint& checkpoint, const LogKey& log, std::int64_t tree_size,
                         std::string_view root_hash) {
  const std::string name = log_name(log.instance.base_url);
  if (name.empty()) {
    return unexpected(refuse("cannot be matched to its log: the trusted root gives the log `" +
                             to_hex(log.instance.log_id) + "` no base URL"));
  }
  const std::string hint = log.instance.log_id.substr(0, 4);
  const NoteSignature* own = nullptr;
  for (const auto& signature : checkpoint.signatures) {
    if (signature.name == name && signature.key_hint == hint) own = &signature;
  }
  if (own == nullptr) {
    return unexpected(refuse("carries no signature of the log `" + name + "` (key hint " + to_hex(hint) +
                             "); its signatures are from " + std::to_string(checkpoint.signatures.size()) +
                             " other signer(s)"));
  }
  if (!log.key) {
    return unexpected(refuse("is signed with a `" + log.instance.key_details + "` key, which this library cannot use"));
  }
  if (!log.key->verify_message(checkpoint.note, own->signature, HashAlgorithm::kSha256)) {
    return unexpected(refuse("signature of `" + name + "` does not verify with the log's key"));
  }
  const std::string_view origin = checkpoint.origin;
  const bool rekor_v1_origin = origin.starts_with(name + " - ") && is_digits(origin.substr(name.size() + 3));
  if (origin != name && !rekor_v1_origin) {
    return unexpected(refuse("is for the log `" + checkpoint.origin + "`, not `" + name + "`"));
  }
  if (checkpoint.tree_size != tree_size) {
    return unexpected(refuse("is for a tree of " + std::to_string(checkpoint.tree_size) +
                             " leaves; the inclusion proof is for " + std::to_string(tree_size)));
  }
  if (checkpoint.root_hash != root_hash) {
    return unexpected(refuse("commits to the root hash " + to_hex(checkpoint.root_hash) +
                             "; the inclusion proof leads to " + to_hex(root_hash)));
  }
  return {};
}

}  // namespace kernelhub::sigstore
