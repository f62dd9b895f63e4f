// The bodies of upload requests, parsed and validated before anything is written: the NDJSON (or
// JSON) commit, the git-lfs batch call, LFS verify, multipart completion and preupload
// (docs/SERVER.md). Untrusted text in, plain checked values out; no HTTP and
// no store here, so fuzz/commit_body_fuzzer.cpp and fuzz/lfs_batch_fuzzer.cpp drive them directly.
//
// Every parser refuses JSON nested deeper than a body of its kind can be (request_json.hpp) and
// reports the first problem as kInvalidArgument with a message fit for a 400 answer.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernelhub/base/result.hpp"
#include "kernelhub/server/internal/store.hpp"

namespace kernelhub::server {

// One commit line, checked (path by validate_repo_path, oid as sha256 hex) but not applied.
struct PendingChange {
  CommitOperation op;
  std::optional<std::string> inline_content;  // `file` entries: the decoded bytes
};

struct ParsedCommit {
  std::string summary;
  std::string description;
  std::optional<std::string> parent;   // 5-40 lower-case hex
  std::vector<PendingChange> changes;  // no path appears twice
};

// `is_json`: the body is one JSON object ({"summary", "files": [...], "lfsFiles": [...], ...});
// otherwise NDJSON lines of {"key", "value"} with the `header` first.
Result<ParsedCommit> parse_commit_body(std::string_view body, bool is_json);

// The NDJSON commit read one line at a time, so a body far larger than memory should hold (many
// inline files) is never held whole. With a `spill` sink, each `file` entry's bytes are handed to
// it (the store) as soon as its line is read and are not kept in the result.
class NdjsonCommitParser {
 public:
  using BlobSink = std::function<Result<std::string>(std::string_view bytes)>;
  explicit NdjsonCommitParser(BlobSink spill = {});
  // One line, without its '\n'. Errors: kInvalidArgument naming the line; the sink's errors.
  Status feed(std::string_view line);
  // After the last line. Errors: kInvalidArgument (no header, a path twice).
  Result<ParsedCommit> finish();

 private:
  BlobSink spill_;
  ParsedCommit commit_;
  std::size_t line_no_ = 0;
  bool seen_header_ = false;
};

// One object of a batch call. Malformed objects are kept (with `valid` false) because the
// protocol answers them one by one with a 422 inside a 200.
struct LfsBatchObject {
  std::string oid;         // as sent when it was a string, else empty
  std::uint64_t size = 0;  // as sent when it was a non-negative integer, else 0
  bool valid = false;      // oid is 64 lower-case hex and size was present
};

struct LfsBatchRequest {
  enum class Operation { kUpload, kDownload };
  Operation operation = Operation::kDownload;
  bool multipart_accepted = false;  // the client listed the `multipart` transfer
  std::vector<LfsBatchObject> objects;
};

Result<LfsBatchRequest> parse_lfs_batch(std::string_view body);

struct LfsObjectRef {
  std::string oid;  // 64 lower-case hex
  std::uint64_t size = 0;
};

// POST .../info/lfs/objects/verify: {"oid", "size"}.
Result<LfsObjectRef> parse_lfs_verify(std::string_view body);

// Multipart completion: {"oid", "parts": [{"partNumber": i, "etag": "<32 hex>"}]} with exactly
// `expected_parts` parts numbered 1.. in order. Returns the etags (quotes stripped), part 1 first.
Result<std::vector<std::string>> parse_multipart_completion(std::string_view body, std::uint64_t expected_parts);

struct PreuploadFile {
  std::string path;  // passed validate_repo_path
  std::uint64_t size = 0;
  std::string sample;  // decoded base64 sample (may be empty)
};

struct PreuploadRequest {
  std::vector<PreuploadFile> files;
  // The `.gitignore` of the commit being prepared, when it adds one (huggingface_hub sends it as
  // `gitIgnore`); otherwise the repo's own .gitignore applies.
  std::optional<std::string> gitignore;
};

// POST .../preupload/<rev>: {"files": [{"path", "size", "sample"}], "gitIgnore"?: text}.
Result<PreuploadRequest> parse_preupload(std::string_view body);

// A decimal unsigned integer of at most 19 digits (query values such as `size=`); nullopt otherwise.
std::optional<std::uint64_t> parse_u64(std::string_view text);

}  // namespace kernelhub::server
