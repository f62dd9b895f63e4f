// A transparency log's checkpoint: a signed note (the C2SP signed-note and tlog-checkpoint
// formats) committing the log to a tree size and root hash:
//
//   <origin>\n<tree size>\n<base64 root hash>\n[<other line>\n...]\n
//   — <signer name> <base64(4-byte key hint || signature)>\n   (one or more)
//
// The signature is over the text before the blank line, its last newline included. Witnesses may
// add their own signature lines (cosignatures); the log's own line is the one carrying the log's
// name and its key hint (the first four bytes of its log id), wherever it stands.
//
// Thread safety: value types and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kernelhub/base/result.hpp"
#include "kernelhub/sigstore/internal/trusted_material.hpp"

namespace kernelhub::sigstore {

struct NoteSignature {
  std::string name;
  std::string key_hint;  // 4 bytes
  std::string signature;
};

struct Checkpoint {
  std::string note;  // the signed text
  std::string origin;
  std::int64_t tree_size = 0;
  std::string root_hash;
  std::vector<std::string> other_lines;
  std::vector<NoteSignature> signatures;
};

// Errors: kCorruptFile saying what is malformed (no blank line, no signature, a line that is not
// `— name signature`, a missing origin, size or root hash).
Result<Checkpoint> parse_checkpoint(std::string_view envelope);

// The name a log signs its checkpoints with: its base URL's host (and port), e.g.
// `rekor.sigstore.dev`. Empty for a URL without one.
std::string log_name(std::string_view base_url);

// Verifies that `log` signed `checkpoint` (the line with its name and key hint; other lines are
// ignored), that its origin is the log's (the log's name, or for Rekor v1 `<name> - <tree id>`),
// and that it commits to `tree_size` and `root_hash`. Errors: kBadSignature saying which.
Status verify_checkpoint(const Checkpoint& checkpoint, const LogKey& log, std::int64_t tree_size,
                         std::string_view root_hash);

}  // namespace kernelhub::sigstore
