#include "upload_requests.hpp"

#include <set>

#include "digest_text.hpp"
#include "http_text.hpp"
#include "kernelhub/base/internal/base64.hpp"
#include "kernelhub/base/internal/hub_names.hpp"
#include "kernelhub/base/internal/sha256.hpp"
#include "request_json.hpp"

namespace kernelhub::server {
namespace {

using nlohmann::json;

Unexpected invalid(std::string message) {
  return unexpected(ErrorCode::kInvalidArgument, std::move(message));
}

std::optional<std::uint64_t> json_size(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) return std::nullopt;
  const auto& v = j[key];
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer() && v.get<std::int64_t>() >= 0) return static_cast<std::uint64_t>(v.get<std::int64_t>());
  return std::nullopt;
}

std::string string_field(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}

Result<PendingChange> parse_change(const std::string& kind, const json& value) {
  auto bad = [&](std::string message) { return invalid("`" + kind + "` entry: " + std::move(message)); };
  if (!value.is_object() || !value.contains("path") || !value["path"].is_string()) {
    return bad("needs an object with a string `path`");
  }
  PendingChange change;
  const std::string path = value["path"].get<std::string>();
  if (kind == "deletedFolder") {
    auto folder = hub_names::normalize_folder_path(path);
    if (!folder) return unexpected(folder.error());
    change.op = CommitOperation{CommitOperation::Kind::kDeleteFolder, *folder, {}, false, {}};
    return change;
  }
  KH_RETURN_IF_ERROR(hub_names::validate_repo_path(path));
  if (kind == "deletedFile") {
    change.op = CommitOperation{CommitOperation::Kind::kDeleteFile, path, {}, false, {}};
  } else if (kind == "file") {
    if (!value.contains("content") || !value["content"].is_string()) return bad("needs a string `content`");
    const std::string encoding = value.contains("encoding") ? string_field(value, "encoding") : "base64";
    if (encoding != "base64") return bad("unsupported encoding `" + encoding + "`; use base64");
    auto bytes = base64_decode_lenient(value["content"].get<std::string>());
    if (!bytes) return bad("`content` of `" + path + "` is not valid base64");
    change.op = CommitOperation{CommitOperation::Kind::kAddBlob, path, to_hex(sha256(*bytes)), false, bytes->size()};
    change.inline_content = std::move(*bytes);
  } else if (kind == "lfsFile") {
    if (value.contains("algo") && string_field(value, "algo") != "sha256")
      return bad("only `algo: sha256` is supported");
    const std::string oid = string_field(value, "oid");
    if (!is_sha256_hex(oid)) return bad("`oid` of `" + path + "` must be a 64-character lower-case sha256");
    std::optional<std::uint64_t> size;
    if (value.contains("size")) {
      size = json_size(value, "size");
      if (!size) return bad("`size` of `" + path + "` must be a non-negative integer");
    }
    change.op = CommitOperation{CommitOperation::Kind::kAddBlob, path, oid, true, size};
  } else {
    return invalid("unknown commit entry key `" + kind +
                   "`; expected header, file, lfsFile, deletedFile or deletedFolder");
  }
  return change;
}

Status parse_header(const json& value, ParsedCommit& out) {
  if (!value.is_object()) return invalid("`header` value must be an object");
  if (value.contains("summary")) {
    if (!value["summary"].is_string()) return invalid("`summary` must be a string");
    out.summary = value["summary"].get<std::string>();
  }
  if (value.contains("description") && value["description"].is_string()) {
    out.description = value["description"].get<std::string>();
  }
  if (value.contains("parentCommit") && !value["parentCommit"].is_null()) {
    const std::string parent = string_field(value, "parentCommit");
    if (parent.size() < 5 || parent.size() > 40 || !is_hex(parent)) {
      return invalid("`parentCommit` must be 5 to 40 lower-case hex characters");
    }
    out.parent = parent;
  }
  return {};
}

// One path, one change: a commit that adds and deletes the same file is ambiguous.
Status check_unique_paths(const ParsedCommit& commit) {
  std::set<std::string_view> seen;
  for (const auto& change : commit.changes) {
    if (!seen.insert(change.op.path).second)
      return invalid("path `" + change.op.path + "` appears twice in one commit");
  }
  return {};
}

Result<ParsedCommit> parse_json_commit(std::string_view body) {
  ParsedCommit out;
  const json j = parse_request_json(body);
  if (j.is_discarded() || !j.is_object()) return invalid("body is not a JSON object");
  KH_RETURN_IF_ERROR(parse_header(j, out));
  for (const auto& [field, kind] :
       {std::pair{"files", "file"}, std::pair{"lfsFiles", "lfsFile"}, std::pair{"deletedFiles", "deletedFile"},
        std::pair{"deletedFolders", "deletedFolder"}}) {
    if (!j.contains(field)) continue;
    if (!j[field].is_array()) return invalid(std::string("`") + field + "` must be a list");
    for (const auto& v : j[field]) {
      KH_ASSIGN_OR_RETURN(PendingChange change, parse_change(kind, v));
      out.changes.push_back(std::move(change));
    }
  }
  return out;
}

}  // namespace

NdjsonCommitParser::NdjsonCommitParser(BlobSink spill) : spill_(std::move(spill)) {}

Status NdjsonCommitParser::feed(std::string_view line) {
  ++line_no_;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.find_first_not_of(" \t") == std::string_view::npos) return {};
  const json j = parse_request_json(line);
  const std::string where = "NDJSON line " + std::to_string(line_no_);
  if (j.is_discarded() || !j.is_object() || !j.contains("key") || !j["key"].is_string() || !j.contains("value")) {
    return invalid(where + " is not a JSON object {\"key\": ..., \"value\": ...}");
  }
  const std::string key = j["key"].get<std::string>();
  if (key == "header") {
    if (seen_header_) return invalid(where + ": a second `header`");
    seen_header_ = true;
    auto status = parse_header(j["value"], commit_);
    if (!status) return unexpected(status.error().with_context(where));
    return {};
  }
  if (!seen_header_) return invalid(where + ": the first line must be the `header`");
  auto change = parse_change(key, j["value"]);
  if (!change) return unexpected(change.error().with_context(where));
  if (change->inline_content && spill_) {
    auto stored = spill_(*change->inline_content);
    if (!stored) return unexpected(stored.error());
    change->inline_content.reset();
  }
  commit_.changes.push_back(std::move(*change));
  return {};
}

Result<ParsedCommit> NdjsonCommitParser::finish() {
  if (!seen_header_) return invalid("commit body has no `header` line");
  KH_RETURN_IF_ERROR(check_unique_paths(commit_));
  return std::move(commit_);
}

Result<ParsedCommit> parse_commit_body(std::string_view body, bool is_json) {
  if (is_json) {
    KH_ASSIGN_OR_RETURN(ParsedCommit commit, parse_json_commit(body));
    KH_RETURN_IF_ERROR(check_unique_paths(commit));
    return commit;
  }
  NdjsonCommitParser parser;
  while (!body.empty()) {
    const std::size_t nl = body.find('\n');
    KH_RETURN_IF_ERROR(parser.feed(body.substr(0, nl)));
    body = nl == std::string_view::npos ? std::string_view{} : body.substr(nl + 1);
  }
  return parser.finish();
}

Result<LfsBatchRequest> parse_lfs_batch(std::string_view body) {
  const json j = parse_request_json(body);
  if (j.is_discarded() || !j.is_object() || !j.contains("objects") || !j["objects"].is_array()) {
    return invalid("expected a git-lfs batch body {\"operation\", \"objects\": [...]}");
  }
  LfsBatchRequest request;
  const std::string operation = string_field(j, "operation");
  if (operation == "upload") {
    request.operation = LfsBatchRequest::Operation::kUpload;
  } else if (operation != "download") {
    return invalid("`operation` must be `upload` or `download`");
  }
  if (j.contains("hash_algo") && string_field(j, "hash_algo") != "sha256") {
    return invalid("only hash_algo `sha256` is supported");
  }
  if (j.contains("transfers") && j["transfers"].is_array()) {
    for (const auto& t : j["transfers"]) request.multipart_accepted |= t == "multipart";
  }
  for (const auto& o : j["objects"]) {
    LfsBatchObject object;
    object.oid = string_field(o, "oid");
    const auto size = json_size(o, "size");
    object.size = size.value_or(0);
    object.valid = is_sha256_hex(object.oid) && size.has_value();
    request.objects.push_back(std::move(object));
  }
  return request;
}

Result<LfsObjectRef> parse_lfs_verify(std::string_view body) {
  const json j = parse_request_json(body);
  LfsObjectRef ref{string_field(j, "oid"), 0};
  const auto size = json_size(j, "size");
  if (!is_sha256_hex(ref.oid) || !size) return invalid("expected {\"oid\": <sha256>, \"size\": <bytes>}");
  ref.size = *size;
  return ref;
}

Result<std::vector<std::string>> parse_multipart_completion(std::string_view body, std::uint64_t expected_parts) {
  const json j = parse_request_json(body);
  if (j.is_discarded() || !j.is_object() || !j.contains("parts") || !j["parts"].is_array()) {
    return invalid("expected {\"oid\", \"parts\": [{\"partNumber\", \"etag\"}]}");
  }
  const json& parts = j["parts"];
  if (parts.size() != expected_parts) {
    return invalid("expected " + std::to_string(expected_parts) + " parts, got " + std::to_string(parts.size()));
  }
  std::vector<std::string> etags;
  etags.reserve(parts.size());
  for (std::uint64_t i = 1; i <= expected_parts; ++i) {
    const json& p = parts[i - 1];
    std::string etag = string_field(p, "etag");
    if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') etag = etag.substr(1, etag.size() - 2);
    if (json_size(p, "partNumber") != i || etag.size() != 32 || !is_hex(etag)) {
      return invalid("part " + std::to_string(i) + " is missing or malformed");
    }
    etags.push_back(std::move(etag));
  }
  return etags;
}

Result<PreuploadRequest> parse_preupload(std::string_view body) {
  const json j = parse_request_json(body);
  if (j.is_discarded() || !j.is_object() || !j.contains("files") || !j["files"].is_array()) {
    return invalid("expected a JSON body {\"files\": [{\"path\", \"sample\", \"size\"}]}");
  }
  PreuploadRequest request;
  std::vector<PreuploadFile>& files = request.files;
  for (const auto& f : j["files"]) {
    if (!f.is_object() || !f.contains("path") || !f["path"].is_string())
      return invalid("each file needs a string `path`");
    PreuploadFile file;
    file.path = f["path"].get<std::string>();
    KH_RETURN_IF_ERROR(hub_names::validate_repo_path(file.path));
    const auto size = json_size(f, "size");
    if (!size) return invalid("`size` of `" + file.path + "` must be a non-negative integer");
    file.size = *size;
    if (f.contains("sample") && f["sample"].is_string()) {
      auto decoded = base64_decode_lenient(f["sample"].get<std::string>());
      if (!decoded) return invalid("`sample` of `" + file.path + "` is not valid base64");
      file.sample = std::move(*decoded);
    }
    files.push_back(std::move(file));
  }
  if (j.contains("gitIgnore") && !j["gitIgnore"].is_null()) {
    if (!j["gitIgnore"].is_string()) return invalid("`gitIgnore` must be the text of a .gitignore file");
    request.gitignore = j["gitIgnore"].get<std::string>();
  }
  return request;
}

std::optional<std::uint64_t> parse_u64(std::string_view text) {
  if (text.empty() || text.size() > 19) return std::nullopt;
  std::uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return value;
}

}  // namespace kernelhub::server
