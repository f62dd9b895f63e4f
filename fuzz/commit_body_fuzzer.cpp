// libFuzzer target: the server's commit body parser (server/src/upload_requests.hpp), NDJSON and
// JSON. The first byte picks the form, the rest is the body. Beyond "no crash": what it accepts is
// safe to apply — every path passes the server's own check (folders are normalised), no path
// appears twice, an `lfsFile` names a sha256, an inline `file` carries the bytes its sha256 and size
// describe, and the parent is 5-40 hex.
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string_view>

#include "digest_text.hpp"
#include "fuzz_require.hpp"
#include "kernelhub/base/internal/hub_names.hpp"
#include "kernelhub/base/internal/sha256.hpp"
#include "upload_requests.hpp"

using kernelhub::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kernelhub::server;
  using Kind = CommitOperation::Kind;
  if (size == 0) return 0;
  const bool is_json = (data[0] & 1) != 0;
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  auto commit = parse_commit_body(body, is_json);
  if (!commit) {
    require(!commit.error().message.empty());
    return 0;
  }
  if (commit->parent) {
    require(commit->parent->size() >= 5 && commit->parent->size() <= 40 && is_hex(*commit->parent));
  }
  std::set<std::string> paths;
  for (const auto& change : commit->changes) {
    const auto& op = change.op;
    require(paths.insert(op.path).second);
    if (op.kind == Kind::kDeleteFolder) {
      auto again = kernelhub::hub_names::normalize_folder_path(op.path);
      require(again.has_value() && *again == op.path);
      continue;
    }
    require(kernelhub::hub_names::validate_repo_path(op.path).has_value());
    if (op.kind == Kind::kDeleteFile) {
      require(!change.inline_content);
      continue;
    }
    require(is_sha256_hex(op.sha256));
    if (change.inline_content) {
      require(!op.lfs && op.size == change.inline_content->size());
      require(kernelhub::to_hex(kernelhub::sha256(*change.inline_content)) == op.sha256);
    } else {
      require(op.lfs);
    }
  }
  return 0;
}
