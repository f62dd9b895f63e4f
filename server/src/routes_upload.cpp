// Upload routes: preupload, the git-lfs batch API (basic + multipart + verify), the storage
// host's PUT/complete endpoints and the NDJSON commit (hub-protocol.md §3.9, §9 items 10-12).
//
// Note [Validate before writing]: a commit request is parsed and checked completely before the
// store is touched, and the store re-checks blobs and the parent under its write lock, so a bad
// request leaves the repo exactly as it was. Uploaded LFS bytes are hashed while they stream
// into tmp/ and only renamed into blobs/ when sha256 and size match what the batch call named.
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <set>

#include "durable_file.hpp"
#include "git_hash.hpp"
#include "http_text.hpp"
#include "kernelhub/base/sha256.hpp"
#include "kernelhub/server/repo_path.hpp"
#include "server_impl.hpp"

namespace kernelhub::server {
namespace fs = std::filesystem;

namespace {

std::optional<std::uint64_t> parse_u64(std::string_view text) {
  if (text.empty() || text.size() > 19) return std::nullopt;
  std::uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return value;
}

std::optional<std::uint64_t> json_size(const json& j, const char* key) {
  if (!j.contains(key)) return std::nullopt;
  const auto& v = j[key];
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer() && v.get<std::int64_t>() >= 0) return static_cast<std::uint64_t>(v.get<std::int64_t>());
  return std::nullopt;
}

// Same as json_size, as an out-parameter (GCC's maybe-uninitialized check trips on optionals here).
bool read_size(const json& j, const char* key, std::uint64_t& out) {
  if (!j.is_object()) return false;
  const auto size = json_size(j, key);
  out = size.value_or(0);
  return size.has_value();
}

void send_lfs_json(httplib::Response& res, const json& body) {
  res.status = 200;
  res.set_content(dump_json(body), "application/vnd.git-lfs+json");
}

// One parsed commit line, before anything is written.
struct PendingChange {
  CommitOperation op;
  std::optional<std::string> inline_content;  // `file` entries
};

struct ParsedCommit {
  std::string summary;
  std::string description;
  std::optional<std::string> parent;
  std::vector<PendingChange> changes;
};

Result<PendingChange> parse_change(const std::string& kind, const json& value) {
  auto bad = [&](std::string message) {
    return unexpected(ErrorCode::kInvalidArgument, "`" + kind + "` entry: " + std::move(message));
  };
  if (!value.is_object() || !value.contains("path") || !value["path"].is_string()) {
    return bad("needs an object with a string `path`");
  }
  PendingChange change;
  const std::string path = value["path"].get<std::string>();
  if (kind == "deletedFolder") {
    auto folder = normalize_folder_path(path);
    if (!folder) return unexpected(folder.error());
    change.op = CommitOperation{CommitOperation::Kind::kDeleteFolder, *folder, {}, false, {}};
    return change;
  }
  KH_RETURN_IF_ERROR(validate_repo_path(path));
  if (kind == "deletedFile") {
    change.op = CommitOperation{CommitOperation::Kind::kDeleteFile, path, {}, false, {}};
  } else if (kind == "file") {
    if (!value.contains("content") || !value["content"].is_string()) return bad("needs a string `content`");
    const std::string encoding = value.value("encoding", "base64");
    if (encoding != "base64") return bad("unsupported encoding `" + encoding + "`; use base64");
    auto bytes = base64_decode(value["content"].get<std::string>());
    if (!bytes) return bad("`content` of `" + path + "` is not valid base64");
    change.op = CommitOperation{CommitOperation::Kind::kAddBlob, path, to_hex(sha256(*bytes)), false, bytes->size()};
    change.inline_content = std::move(*bytes);
  } else if (kind == "lfsFile") {
    if (value.value("algo", "sha256") != "sha256") return bad("only `algo: sha256` is supported");
    if (!value.contains("oid") || !value["oid"].is_string() || !is_sha256_hex(value["oid"].get<std::string>())) {
      return bad("`oid` of `" + path + "` must be a 64-character lower-case sha256");
    }
    std::optional<std::uint64_t> size;
    if (value.contains("size")) {
      size = json_size(value, "size");
      if (!size) return bad("`size` of `" + path + "` must be a non-negative integer");
    }
    change.op = CommitOperation{CommitOperation::Kind::kAddBlob, path, value["oid"].get<std::string>(), true, size};
  } else {
    return unexpected(
        ErrorCode::kInvalidArgument,
        "unknown commit entry key `" + kind + "`; expected header, file, lfsFile, deletedFile or deletedFolder");
  }
  return change;
}

Status parse_header(const json& value, ParsedCommit& out) {
  if (!value.is_object()) return unexpected(ErrorCode::kInvalidArgument, "`header` value must be an object");
  if (value.contains("summary")) {
    if (!value["summary"].is_string()) return unexpected(ErrorCode::kInvalidArgument, "`summary` must be a string");
    out.summary = value["summary"].get<std::string>();
  }
  if (value.contains("description") && value["description"].is_string()) {
    out.description = value["description"].get<std::string>();
  }
  if (value.contains("parentCommit") && !value["parentCommit"].is_null()) {
    const auto& p = value["parentCommit"];
    if (!p.is_string() || p.get<std::string>().size() < 5 || p.get<std::string>().size() > 40 ||
        !is_hex(p.get<std::string>())) {
      return unexpected(ErrorCode::kInvalidArgument, "`parentCommit` must be 5 to 40 lower-case hex characters");
    }
    out.parent = p.get<std::string>();
  }
  return {};
}

Result<ParsedCommit> parse_commit_body(std::string_view body, bool is_json) {
  ParsedCommit out;
  if (is_json) {
    const json j = json::parse(body, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return unexpected(ErrorCode::kInvalidArgument, "body is not a JSON object");
    KH_RETURN_IF_ERROR(parse_header(j, out));
    for (const auto& [field, kind] :
         {std::pair{"files", "file"}, std::pair{"lfsFiles", "lfsFile"}, std::pair{"deletedFiles", "deletedFile"},
          std::pair{"deletedFolders", "deletedFolder"}}) {
      if (!j.contains(field)) continue;
      if (!j[field].is_array())
        return unexpected(ErrorCode::kInvalidArgument, std::string("`") + field + "` must be a list");
      for (const auto& v : j[field]) {
        KH_ASSIGN_OR_RETURN(PendingChange change, parse_change(kind, v));
        out.changes.push_back(std::move(change));
      }
    }
    return out;
  }
  std::size_t line_no = 0;
  bool seen_header = false;
  while (!body.empty()) {
    const std::size_t nl = body.find('\n');
    std::string_view line = body.substr(0, nl);
    body = nl == std::string_view::npos ? std::string_view{} : body.substr(nl + 1);
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    const json j = json::parse(line, nullptr, false);
    const std::string where = "NDJSON line " + std::to_string(line_no);
    if (j.is_discarded() || !j.is_object() || !j.contains("key") || !j["key"].is_string() || !j.contains("value")) {
      return unexpected(ErrorCode::kInvalidArgument, where + " is not a JSON object {\"key\": ..., \"value\": ...}");
    }
    const std::string key = j["key"].get<std::string>();
    if (key == "header") {
      if (seen_header) return unexpected(ErrorCode::kInvalidArgument, where + ": a second `header`");
      seen_header = true;
      auto status = parse_header(j["value"], out);
      if (!status) return unexpected(status.error().with_context(where));
      continue;
    }
    if (!seen_header) return unexpected(ErrorCode::kInvalidArgument, where + ": the first line must be the `header`");
    auto change = parse_change(key, j["value"]);
    if (!change) return unexpected(change.error().with_context(where));
    out.changes.push_back(std::move(*change));
  }
  if (!seen_header) return unexpected(ErrorCode::kInvalidArgument, "commit body has no `header` line");
  return out;
}

}  // namespace

bool Server::Impl::take_upload_fault(std::uint64_t length) {
  const std::uint64_t limit = options.fault_cut_upload_after_bytes;
  if (limit == 0 || length <= limit) return false;
  bool expected = false;
  return upload_fault_done.compare_exchange_strong(expected, true);
}

void Server::Impl::drop_connection(httplib::Response& res) {
  res.set_header("Connection", "close");
  res.set_content_provider(1, "application/octet-stream",
                           [](std::size_t, std::size_t, httplib::DataSink&) { return false; });
}

void Server::Impl::preupload(Call& call, const RepoKey& key, const std::string& revision) {
  auto repo = writable_repo(call, key);
  if (!repo) return;
  const json body = json::parse(call.body, nullptr, false);
  if (body.is_discarded() || !body.is_object() || !body.contains("files") || !body["files"].is_array()) {
    return send_error(call.res, 400, "BadRequest",
                      "expected a JSON body {\"files\": [{\"path\", \"sample\", \"size\"}]}");
  }
  auto commit = commit_at(call, *repo, revision);
  if (!commit) return;
  json files = json::array();
  for (const auto& f : body["files"]) {
    if (!f.is_object() || !f.contains("path") || !f["path"].is_string()) {
      return send_error(call.res, 400, "BadRequest", "each file needs a string `path`");
    }
    const std::string path = f["path"].get<std::string>();
    if (auto valid = validate_repo_path(path); !valid)
      return send_error(call.res, 400, "BadRequest", valid.error().message);
    const auto size = json_size(f, "size");
    if (!size)
      return send_error(call.res, 400, "BadRequest", "`size` of `" + path + "` must be a non-negative integer");
    std::string sample;
    if (f.contains("sample") && f["sample"].is_string()) {
      auto decoded = base64_decode(f["sample"].get<std::string>());
      if (!decoded) return send_error(call.res, 400, "BadRequest", "`sample` of `" + path + "` is not valid base64");
      sample = std::move(*decoded);
    }
    // The Hub's rule of thumb: big or binary files go to LFS; empty files never do.
    const bool lfs = *size > 0 && (*size >= options.lfs_threshold || sample.find('\0') != std::string::npos);
    json entry = {{"path", path}, {"uploadMode", lfs ? "lfs" : "regular"}, {"shouldIgnore", false}};
    if (auto it = commit->files.find(path); it != commit->files.end()) {
      entry["oid"] = it->second.lfs ? it->second.sha256 : it->second.git_sha1;
    }
    files.push_back(std::move(entry));
  }
  send_json(call.res, 200, {{"files", files}, {"commitOid", commit->id}});
}

void Server::Impl::lfs_batch(Call& call, const RepoKey& key) {
  const json body = json::parse(call.body, nullptr, false);
  if (body.is_discarded() || !body.is_object() || !body.contains("objects") || !body["objects"].is_array()) {
    return send_error(call.res, 400, "BadRequest", "expected a git-lfs batch body {\"operation\", \"objects\": [...]}");
  }
  const std::string operation = body.value("operation", "");
  if (operation != "upload" && operation != "download") {
    return send_error(call.res, 400, "BadRequest", "`operation` must be `upload` or `download`");
  }
  auto repo = operation == "upload" ? writable_repo(call, key) : readable_repo(call, key);
  if (!repo) return;
  if (body.value("hash_algo", "sha256") != "sha256") {
    return send_error(call.res, 400, "BadRequest", "only hash_algo `sha256` is supported");
  }
  bool multipart_ok = false;
  if (body.contains("transfers") && body["transfers"].is_array()) {
    for (const auto& t : body["transfers"]) multipart_ok |= t == "multipart";
  }
  bool used_multipart = false;
  json objects = json::array();
  for (const auto& o : body["objects"]) {
    const std::string oid =
        o.is_object() && o.contains("oid") && o["oid"].is_string() ? o["oid"].get<std::string>() : "";
    std::uint64_t size_value = 0;
    const bool has_size = read_size(o, "size", size_value);
    const std::uint64_t* size = &size_value;
    json out = {{"oid", oid}, {"size", size_value}};
    if (!is_sha256_hex(oid) || !has_size) {
      out["error"] = {{"code", 422}, {"message", "object needs a 64-hex sha256 `oid` and a non-negative `size`"}};
      objects.push_back(std::move(out));
      continue;
    }
    const auto stored = store->blob_size(oid);
    if (operation == "download") {
      if (!stored) {
        out["error"] = {{"code", 404}, {"message", "Object does not exist"}};
      } else {
        out["actions"] = {{"download", {{"href", storage_url + "/lfs-storage/" + oid + "?sig=" + sign("get:" + oid)}}}};
      }
      objects.push_back(std::move(out));
      continue;
    }
    if (*size > options.max_lfs_object_bytes) {
      out["error"] = {{"code", 422},
                      {"message", "object of " + std::to_string(*size) + " bytes is over this server's limit of " +
                                      std::to_string(options.max_lfs_object_bytes)}};
      objects.push_back(std::move(out));
      continue;
    }
    if (stored && *stored == *size) {  // already here: no actions, the client skips it
      objects.push_back(std::move(out));
      continue;
    }
    const std::string sz = std::to_string(*size);
    const std::string verify = repo_url(key) + ".git/info/lfs/objects/verify";
    if (multipart_ok && *size > options.multipart_chunk_bytes) {
      used_multipart = true;
      const std::uint64_t chunk = options.multipart_chunk_bytes;
      json header = {{"chunk_size", std::to_string(chunk)}};
      const std::uint64_t parts = (*size + chunk - 1) / chunk;
      const std::string part_sig = sign("part:" + oid + ":" + sz);
      for (std::uint64_t i = 1; i <= parts; ++i) {
        char number[16];
        std::snprintf(number, sizeof(number), "%05llu", static_cast<unsigned long long>(i));
        header[number] =
            storage_url + "/lfs-part/" + oid + "/" + std::to_string(i) + "?size=" + sz + "&sig=" + part_sig;
      }
      out["actions"] = {{"upload",
                         {{"href", storage_url + "/lfs-complete/" + oid + "?size=" + sz +
                                       "&sig=" + sign("complete:" + oid + ":" + sz)},
                          {"header", header}}},
                        {"verify", {{"href", verify}}}};
    } else {
      out["actions"] = {
          {"upload",
           {{"href", storage_url + "/lfs-upload/" + oid + "?size=" + sz + "&sig=" + sign("put:" + oid + ":" + sz)}}},
          {"verify", {{"href", verify}}}};
    }
    out["authenticated"] = true;
    objects.push_back(std::move(out));
  }
  send_lfs_json(call.res,
                {{"transfer", used_multipart ? "multipart" : "basic"}, {"objects", objects}, {"hash_algo", "sha256"}});
}

void Server::Impl::lfs_verify(Call& call, const RepoKey& key) {
  if (!writable_repo(call, key)) return;
  const json body = json::parse(call.body, nullptr, false);
  const std::string oid =
      body.is_object() && body.contains("oid") && body["oid"].is_string() ? body["oid"].get<std::string>() : "";
  std::uint64_t size_value = 0;
  const bool has_size = read_size(body, "size", size_value);
  const std::uint64_t* size = &size_value;
  if (!is_sha256_hex(oid) || !has_size) {
    return send_error(call.res, 400, "BadRequest", "expected {\"oid\": <sha256>, \"size\": <bytes>}");
  }
  const auto stored = store->blob_size(oid);
  if (!stored) return send_error(call.res, 404, "EntryNotFound", "LFS object " + oid + " was never uploaded");
  if (*stored != *size) {
    return send_error(call.res, 422, "LfsSizeMismatch",
                      "LFS object " + oid + " has " + std::to_string(*stored) + " bytes, not " + std::to_string(*size));
  }
  send_lfs_json(call.res, {{"oid", oid}, {"size", *size}});
}

void Server::Impl::lfs_upload(Call& call, const httplib::ContentReader& reader, const std::string& oid) {
  const auto size = parse_u64(call.query_value("size"));
  if (!is_sha256_hex(oid) || !size) return send_error(call.res, 400, "BadRequest", "malformed upload URL");
  if (!check_signature(call, "put:" + oid + ":" + std::to_string(*size))) return;
  auto temp = TempFile::create(store->tmp_dir());
  if (!temp) return send_error(call.res, 500, "InternalError", temp.error().message);
  Sha256 hasher;
  std::uint64_t received = 0;
  bool write_failed = false;
  const bool cut = take_upload_fault(*size);
  const bool ok = reader([&](const char* data, std::size_t n) {
    if (cut) return true;  // read the body to its end, store none of it, then drop
    received += n;
    if (received > *size) return false;  // more than announced: stop reading now
    hasher.update(data, n);
    if (!temp->write(data, n)) {
      write_failed = true;
      return false;
    }
    return true;
  });
  if (write_failed) return send_error(call.res, 507, "InsufficientStorage", "the server could not store the upload");
  if (cut) return drop_connection(call.res);
  if (received != *size) {
    call.res.set_header("Connection", "close");
    return send_error(call.res, 400, "LfsSizeMismatch",
                      "upload of " + oid + " announced " + std::to_string(*size) + " bytes but " +
                          (received > *size ? "more" : std::to_string(received)) + " arrived" +
                          (ok ? "" : " (connection interrupted)"));
  }
  const std::string actual = to_hex(hasher.finish());
  if (actual != oid) {
    return send_error(
        call.res, 400, "LfsOidMismatch",
        "uploaded bytes hash to sha256 " + actual + ", not the announced " + oid + "; nothing was stored");
  }
  if (auto done = temp->finish(); !done) return send_error(call.res, 500, "InternalError", done.error().message);
  if (auto adopted = store->adopt_blob(temp->path(), oid); !adopted) {
    return send_error(call.res, 500, "InternalError", adopted.error().message);
  }
  call.res.set_header("ETag", "\"" + oid + "\"");
  send_json(call.res, 200, json::object());
}

void Server::Impl::lfs_upload_part(Call& call, const httplib::ContentReader& reader, const std::string& oid,
                                   const std::string& part_text) {
  const auto size = parse_u64(call.query_value("size"));
  const auto part = parse_u64(part_text);
  if (!is_sha256_hex(oid) || !size || !part) return send_error(call.res, 400, "BadRequest", "malformed part URL");
  if (!check_signature(call, "part:" + oid + ":" + std::to_string(*size))) return;
  const std::uint64_t chunk = options.multipart_chunk_bytes;
  const std::uint64_t parts = (*size + chunk - 1) / chunk;
  if (*part < 1 || *part > parts) {
    return send_error(call.res, 400, "BadRequest", "part " + part_text + " is outside 1.." + std::to_string(parts));
  }
  const std::uint64_t expected = *part < parts ? chunk : *size - chunk * (parts - 1);
  const fs::path dir = store->tmp_dir() / ("parts-" + oid);
  std::error_code ec;
  fs::create_directories(dir, ec);
  auto temp = TempFile::create(store->tmp_dir());
  if (!temp) return send_error(call.res, 500, "InternalError", temp.error().message);
  Sha256 hasher;
  std::uint64_t received = 0;
  bool write_failed = false;
  const bool cut = take_upload_fault(expected);
  reader([&](const char* data, std::size_t n) {
    if (cut) return true;  // read the body to its end, store none of it, then drop
    received += n;
    if (received > expected) return false;
    hasher.update(data, n);
    if (!temp->write(data, n)) {
      write_failed = true;
      return false;
    }
    return true;
  });
  if (write_failed) return send_error(call.res, 507, "InsufficientStorage", "the server could not store the part");
  if (cut) return drop_connection(call.res);
  if (received != expected) {
    call.res.set_header("Connection", "close");
    return send_error(
        call.res, 400, "LfsSizeMismatch",
        "part " + part_text + " must have " + std::to_string(expected) + " bytes, got " + std::to_string(received));
  }
  const std::string etag = to_hex(hasher.finish()).substr(0, 32);
  if (auto done = temp->commit_to(dir / (std::to_string(*part) + "." + etag)); !done) {
    return send_error(call.res, 500, "InternalError", done.error().message);
  }
  call.res.set_header("ETag", "\"" + etag + "\"");
  send_json(call.res, 200, json::object());
}

void Server::Impl::lfs_complete(Call& call, const std::string& oid) {
  const auto size = parse_u64(call.query_value("size"));
  if (!is_sha256_hex(oid) || !size) return send_error(call.res, 400, "BadRequest", "malformed completion URL");
  if (!check_signature(call, "complete:" + oid + ":" + std::to_string(*size))) return;
  const json body = json::parse(call.body, nullptr, false);
  if (body.is_discarded() || !body.is_object() || !body.contains("parts") || !body["parts"].is_array()) {
    return send_error(call.res, 400, "BadRequest", "expected {\"oid\", \"parts\": [{\"partNumber\", \"etag\"}]}");
  }
  const std::uint64_t chunk = options.multipart_chunk_bytes;
  const std::uint64_t parts = (*size + chunk - 1) / chunk;
  if (body["parts"].size() != parts) {
    return send_error(call.res, 400, "BadRequest",
                      "expected " + std::to_string(parts) + " parts, got " + std::to_string(body["parts"].size()));
  }
  const fs::path dir = store->tmp_dir() / ("parts-" + oid);
  auto temp = TempFile::create(store->tmp_dir());
  if (!temp) return send_error(call.res, 500, "InternalError", temp.error().message);
  Sha256 hasher;
  std::uint64_t total = 0;
  std::vector<char> buffer(1 << 20);
  for (std::uint64_t i = 1; i <= parts; ++i) {
    const json& p = body["parts"][i - 1];
    std::string etag = p.is_object() && p.contains("etag") && p["etag"].is_string() ? p["etag"].get<std::string>() : "";
    if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') etag = etag.substr(1, etag.size() - 2);
    if (json_size(p, "partNumber") != i || etag.size() != 32 || !is_hex(etag)) {
      return send_error(call.res, 400, "BadRequest", "part " + std::to_string(i) + " is missing or malformed");
    }
    UniqueFd fd(::open((dir / (std::to_string(i) + "." + etag)).c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd) {
      return send_error(call.res, 400, "BadRequest",
                        "part " + std::to_string(i) + " with etag " + etag + " was never uploaded");
    }
    while (true) {
      const ssize_t n = ::read(fd.get(), buffer.data(), buffer.size());
      if (n < 0) return send_error(call.res, 500, "InternalError", "cannot read an uploaded part");
      if (n == 0) break;
      hasher.update(buffer.data(), static_cast<std::size_t>(n));
      total += static_cast<std::uint64_t>(n);
      if (!temp->write(buffer.data(), static_cast<std::size_t>(n))) {
        return send_error(call.res, 507, "InsufficientStorage", "the server could not store the object");
      }
    }
  }
  const std::string actual = to_hex(hasher.finish());
  if (total != *size || actual != oid) {
    return send_error(call.res, 400, "LfsOidMismatch",
                      "assembled parts have " + std::to_string(total) + " bytes with sha256 " + actual + "; expected " +
                          std::to_string(*size) + " bytes with sha256 " + oid);
  }
  if (auto done = temp->finish(); !done) return send_error(call.res, 500, "InternalError", done.error().message);
  if (auto adopted = store->adopt_blob(temp->path(), oid); !adopted) {
    return send_error(call.res, 500, "InternalError", adopted.error().message);
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  send_json(call.res, 200, json::object());
}

void Server::Impl::commit(Call& call, const RepoKey& key, const std::string& revision) {
  auto repo = writable_repo(call, key);
  if (!repo) return;
  const bool is_json = call.req.get_header_value("Content-Type").starts_with("application/json");
  auto parsed = parse_commit_body(call.body, is_json);
  if (!parsed) return send_error(call.res, 400, "BadRequest", "malformed commit: " + parsed.error().message);
  std::set<std::string> seen;
  for (const auto& change : parsed->changes) {
    if (!seen.insert(change.op.path).second) {
      return send_error(call.res, 400, "BadRequest", "path `" + change.op.path + "` appears twice in one commit");
    }
    // Fail fast on unknown LFS objects, before any inline blob is written.
    if (change.op.kind == CommitOperation::Kind::kAddBlob && !change.inline_content &&
        !store->blob_size(change.op.sha256)) {
      return send_error(call.res, 400, "LfsObjectNotFound",
                        "lfsFile `" + change.op.path + "` names sha256 " + change.op.sha256 +
                            ", which was never uploaded; upload it through the LFS batch API first");
    }
  }
  std::string branch = revision;
  const bool create_pr = call.query_flag("create_pr");
  if (!repo->branches.contains(revision) || create_pr) {
    auto base = store->resolve(*repo, revision);
    if (!base) {
      return send_error(call.res, 404, "RevisionNotFound", "Invalid rev id: " + revision + " (no such branch)");
    }
    if (!create_pr) {
      return send_error(call.res, 400, "BadRequest",
                        "`" + revision + "` is a tag or a commit; commits can only be made on a branch");
    }
    std::size_t n = 1;
    while (repo->branches.contains("refs/pr/" + std::to_string(n))) ++n;
    branch = "refs/pr/" + std::to_string(n);
    auto made = store->set_ref(key, Store::RefKind::kBranch, branch, *base, true);
    if (!made) return send_error(call.res, 500, "InternalError", made.error().message);
  }
  CommitRequest request;
  request.branch = branch;
  request.title = parsed->summary.empty() ? "Upload files with kernelhub" : parsed->summary;
  request.message = parsed->description;
  request.parent_commit = parsed->parent;
  for (auto& change : parsed->changes) {
    if (change.inline_content) {
      auto sha = store->put_blob(*change.inline_content);
      if (!sha) return send_error(call.res, 500, "InternalError", sha.error().message);
    }
    request.operations.push_back(std::move(change.op));
  }
  auto outcome = store->apply_commit(key, request);
  if (!outcome) return send_error(call.res, 500, "InternalError", outcome.error().message);
  using S = CommitOutcome::Status;
  switch (outcome->status) {
    case S::kCommitted: break;
    case S::kRepoNotFound:
      return send_error(call.res, 404, "RepoNotFound", "Repository " + key.id() + " was deleted during the commit");
    case S::kBranchNotFound: return send_error(call.res, 404, "RevisionNotFound", "Invalid rev id: " + branch);
    case S::kParentMismatch:
      return send_error(call.res, 412, "ParentCommitMismatch",
                        "A commit has happened since `parentCommit` " + parsed->parent.value_or("") + ": `" + branch +
                            "` is now at " + outcome->detail + ". Please refresh and try again.");
    case S::kMissingBlob:
      return send_error(call.res, 400, "LfsObjectNotFound",
                        "LFS object for " + outcome->detail + " was never uploaded");
    case S::kSizeMismatch: return send_error(call.res, 400, "LfsSizeMismatch", "size mismatch for " + outcome->detail);
    case S::kEntryNotFound:
      return send_error(call.res, 404, "EntryNotFound",
                        "A file with this name doesn't exist: `" + outcome->detail + "` (cannot delete it)");
  }
  json out = {{"success", true},
              {"commitOid", outcome->commit_id},
              {"commitUrl", repo_url(key) + "/commit/" + outcome->commit_id},
              {"commitMessage", request.title},
              {"hookOutput", ""}};
  if (create_pr) out["pullRequestUrl"] = repo_url(key) + "/discussions/" + branch.substr(8);
  send_json(call.res, 200, out);
}

}  // namespace kernelhub::server
