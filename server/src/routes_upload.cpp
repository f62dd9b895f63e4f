// Upload routes: preupload, the git-lfs batch API (basic + multipart + verify), the storage
// host's PUT/complete endpoints and the NDJSON commit (docs/SERVER.md).
//
// Note [Validate before writing]: a commit request is parsed and checked completely before the
// store is touched, and the store re-checks blobs and the parent under its write lock, so a bad
// request leaves the repo exactly as it was. Uploaded LFS bytes are hashed while they stream
// into tmp/ and only renamed into blobs/ when sha256 and size match what the batch call named.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "digest_text.hpp"
#include "http_text.hpp"
#include "kernelhub/base/internal/atomic_file.hpp"
#include "kernelhub/base/internal/sha256.hpp"
#include "kernelhub/server/internal/git_patterns.hpp"
#include "server_impl.hpp"
#include "upload_requests.hpp"

namespace kernelhub::server {
namespace fs = std::filesystem;

namespace {

void send_lfs_json(httplib::Response& res, const json& body) {
  res.status = 200;
  res.set_content(dump_json(body), "application/vnd.git-lfs+json");
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

namespace {

// Pattern files bigger than this are not read (the Hub's own default is 1.5 KB).
constexpr std::uint64_t kMaxPatternFileBytes = 1 << 20;

// Every .gitattributes of a commit, deepest folder first (deeper files override, as in git).
std::vector<GitAttributes> attribute_files(const Store& store, const Commit& commit) {
  std::vector<std::pair<std::size_t, GitAttributes>> found;
  for (const auto& [path, entry] : commit.files) {
    if (path != ".gitattributes" && !path.ends_with("/.gitattributes")) continue;
    auto text = store.read_blob(entry.sha256, kMaxPatternFileBytes);
    if (!text) continue;
    const std::string folder = path == ".gitattributes" ? "" : path.substr(0, path.size() - 15);
    found.emplace_back(std::count(path.begin(), path.end(), '/'), GitAttributes::parse(*text, folder));
  }
  std::stable_sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<GitAttributes> out;
  for (auto& [depth, file] : found) out.push_back(std::move(file));
  return out;
}

}  // namespace

bool Server::Impl::is_own_pull_request(const Call& call, const RepoKey& key, const std::string& revision) const {
  if (!revision.starts_with("refs/pr/") || call.who == nullptr) return false;
  auto state = store->repo(key);
  if (!state) return false;
  for (const auto& d : state->meta.discussions) {
    if (d.is_pull_request && revision == "refs/pr/" + std::to_string(d.num) && d.author == call.who->user) return true;
  }
  return false;
}

void Server::Impl::preupload(Call& call, const RepoKey& key, const std::string& revision) {
  auto repo = call.query_flag("create_pr") || is_own_pull_request(call, key, revision) ? contributable_repo(call, key)
                                                                                       : writable_repo(call, key);
  if (!repo) return;
  auto request = parse_preupload(call.body);
  if (!request) return send_error(call.res, 400, "BadRequest", request.error().message);
  auto commit = commit_at(call, *repo, revision);
  if (!commit) return;
  const std::vector<GitAttributes> attributes = attribute_files(*store, *commit);
  GitIgnore ignore;
  if (request->gitignore) {
    ignore = GitIgnore::parse(*request->gitignore);
  } else if (auto it = commit->files.find(".gitignore"); it != commit->files.end()) {
    if (auto text = store->read_blob(it->second.sha256, kMaxPatternFileBytes)) ignore = GitIgnore::parse(*text);
  }
  json answer = json::array();
  for (const auto& file : request->files) {
    // As the Hub: LFS when .gitattributes tracks the path, or the file is big or binary; an
    // empty file is always regular (it has nothing to store).
    const bool lfs =
        file.size > 0 && (is_lfs_by_attributes(attributes, file.path) || file.size >= options.lfs_threshold ||
                          file.sample.find('\0') != std::string::npos);
    json entry = {
        {"path", file.path}, {"uploadMode", lfs ? "lfs" : "regular"}, {"shouldIgnore", ignore.ignores(file.path)}};
    if (auto it = commit->files.find(file.path); it != commit->files.end()) {
      entry["oid"] = it->second.lfs ? it->second.sha256 : it->second.git_sha1;
    }
    answer.push_back(std::move(entry));
  }
  send_json(call.res, 200, {{"files", answer}, {"commitOid", commit->id}});
}

void Server::Impl::lfs_batch(Call& call, const RepoKey& key) {
  auto request = parse_lfs_batch(call.body);
  if (!request) return send_error(call.res, 400, "BadRequest", request.error().message);
  const bool upload = request->operation == LfsBatchRequest::Operation::kUpload;
  // Anyone who may open a pull request may upload its LFS objects.
  auto repo = upload ? contributable_repo(call, key) : readable_repo(call, key);
  if (!repo) return;
  bool used_multipart = false;
  json objects = json::array();
  for (const auto& object : request->objects) {
    const std::string& oid = object.oid;
    const std::uint64_t size = object.size;
    json out = {{"oid", oid}, {"size", object.size}};
    if (!object.valid) {
      out["error"] = {{"code", 422}, {"message", "object needs a 64-hex sha256 `oid` and a non-negative `size`"}};
      objects.push_back(std::move(out));
      continue;
    }
    const auto stored = store->blob_size(oid);
    if (!upload) {
      if (!stored) {
        out["error"] = {{"code", 404}, {"message", "Object does not exist"}};
      } else {
        out["actions"] = {{"download", {{"href", storage_url + "/lfs-storage/" + oid + "?sig=" + sign("get:" + oid)}}}};
      }
      objects.push_back(std::move(out));
      continue;
    }
    if (size > options.max_lfs_object_bytes) {
      out["error"] = {{"code", 422},
                      {"message", "object of " + std::to_string(size) + " bytes is over this server's limit of " +
                                      std::to_string(options.max_lfs_object_bytes)}};
      objects.push_back(std::move(out));
      continue;
    }
    if (stored && *stored == size) {  // already here: no actions, the client skips it
      objects.push_back(std::move(out));
      continue;
    }
    const std::string sz = std::to_string(size);
    const std::string verify = repo_url(key) + ".git/info/lfs/objects/verify";
    if (request->multipart_accepted && size > options.multipart_chunk_bytes) {
      used_multipart = true;
      const std::uint64_t chunk = options.multipart_chunk_bytes;
      json header = {{"chunk_size", std::to_string(chunk)}};
      const std::uint64_t parts = (size + chunk - 1) / chunk;
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
  if (!contributable_repo(call, key)) return;
  auto object = parse_lfs_verify(call.body);
  if (!object) return send_error(call.res, 400, "BadRequest", object.error().message);
  const std::string& oid = object->oid;
  const std::uint64_t size = object->size;
  const auto stored = store->blob_size(oid);
  if (!stored) return send_error(call.res, 404, "EntryNotFound", "LFS object " + oid + " was never uploaded");
  if (*stored != size) {
    return send_error(call.res, 422, "LfsSizeMismatch",
                      "LFS object " + oid + " has " + std::to_string(*stored) + " bytes, not " + std::to_string(size));
  }
  send_lfs_json(call.res, {{"oid", oid}, {"size", size}});
}

void Server::Impl::lfs_upload(Call& call, const httplib::ContentReader& reader, const std::string& oid) {
  const auto size = parse_u64(call.query_value("size"));
  if (!is_sha256_hex(oid) || !size) return send_error(call.res, 400, "BadRequest", "malformed upload URL");
  if (!check_signature(call, "put:" + oid + ":" + std::to_string(*size))) return;
  auto temp = TempFile::create_in(store->tmp_dir());
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
  if (auto done = temp->finish(Durability::kFull); !done)
    return send_error(call.res, 500, "InternalError", done.error().message);
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
  auto temp = TempFile::create_in(store->tmp_dir());
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
  if (auto done = temp->commit_to(dir / (std::to_string(*part) + "." + etag), Durability::kFull); !done) {
    return send_error(call.res, 500, "InternalError", done.error().message);
  }
  call.res.set_header("ETag", "\"" + etag + "\"");
  send_json(call.res, 200, json::object());
}

void Server::Impl::lfs_complete(Call& call, const std::string& oid) {
  const auto size = parse_u64(call.query_value("size"));
  if (!is_sha256_hex(oid) || !size) return send_error(call.res, 400, "BadRequest", "malformed completion URL");
  if (!check_signature(call, "complete:" + oid + ":" + std::to_string(*size))) return;
  const std::uint64_t chunk = options.multipart_chunk_bytes;
  auto etags = parse_multipart_completion(call.body, (*size + chunk - 1) / chunk);
  if (!etags) return send_error(call.res, 400, "BadRequest", etags.error().message);
  const fs::path dir = store->tmp_dir() / ("parts-" + oid);
  auto temp = TempFile::create_in(store->tmp_dir());
  if (!temp) return send_error(call.res, 500, "InternalError", temp.error().message);
  Sha256 hasher;
  std::uint64_t total = 0;
  std::vector<char> buffer(1 << 20);
  for (std::uint64_t i = 1; i <= etags->size(); ++i) {
    const std::string& etag = (*etags)[i - 1];
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
  if (auto done = temp->finish(Durability::kFull); !done)
    return send_error(call.res, 500, "InternalError", done.error().message);
  if (auto adopted = store->adopt_blob(temp->path(), oid); !adopted) {
    return send_error(call.res, 500, "InternalError", adopted.error().message);
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  send_json(call.res, 200, json::object());
}

std::optional<ParsedCommit> Server::Impl::read_streamed_commit(Call& call, std::vector<StagedBlob>& staged) {
  NdjsonCommitParser parser([&](std::string_view bytes) -> Result<std::string> {
    KH_ASSIGN_OR_RETURN(TempFile file, TempFile::create_in(store->tmp_dir()));
    KH_RETURN_IF_ERROR(file.write(bytes.data(), bytes.size()));
    std::string sha = to_hex(sha256(bytes));
    staged.push_back({std::move(file), sha});
    return sha;
  });
  std::string pending;      // the line being received
  std::size_t scanned = 0;  // bytes of `pending` known to hold no '\n'
  std::uint64_t total = 0;
  std::optional<Error> failure;
  int status = 400;
  const bool read = (*call.streamed_body)([&](const char* data, std::size_t size) {
    total += size;
    if (total > options.max_commit_body_bytes) {
      status = 413;
      failure = Error{ErrorCode::kInvalidArgument, "commit body is over this server's limit of " +
                                                       std::to_string(options.max_commit_body_bytes) + " bytes"};
      return false;
    }
    pending.append(data, size);
    std::size_t start = 0;
    for (std::size_t nl; (nl = pending.find('\n', std::max(start, scanned))) != std::string::npos; start = nl + 1) {
      if (auto fed = parser.feed(std::string_view(pending).substr(start, nl - start)); !fed) {
        status = fed.error().code == ErrorCode::kInvalidArgument ? 400 : 500;
        failure = fed.error();
        return false;
      }
    }
    pending.erase(0, start);
    scanned = pending.size();
    if (pending.size() > options.max_body_bytes) {
      status = 413;
      failure = Error{ErrorCode::kInvalidArgument, "an NDJSON commit line is over this server's limit of " +
                                                       std::to_string(options.max_body_bytes) + " bytes"};
      return false;
    }
    return true;
  });
  if (!failure && !read) failure = Error{ErrorCode::kInvalidArgument, "the request body could not be read completely"};
  if (!failure && !pending.empty()) {
    if (auto fed = parser.feed(pending); !fed) failure = fed.error();
  }
  std::optional<ParsedCommit> out;
  if (!failure) {
    auto finished = parser.finish();
    if (finished) {
      out = std::move(*finished);
    } else {
      failure = finished.error();
    }
  }
  if (failure) {
    if (status == 413) {
      send_error(call.res, 413, "PayloadTooLarge", failure->message);
    } else {
      send_error(call.res, status, status == 400 ? "BadRequest" : "InternalError",
                 "malformed commit: " + failure->message);
    }
  }
  return out;
}

void Server::Impl::commit(Call& call, const RepoKey& key, const std::string& revision) {
  const bool create_pr = call.query_flag("create_pr");
  auto repo =
      create_pr || is_own_pull_request(call, key, revision) ? contributable_repo(call, key) : writable_repo(call, key);
  if (!repo) return;
  std::optional<ParsedCommit> parsed;
  std::vector<StagedBlob> staged;  // a streamed commit's inline files, in tmp/ until it is accepted
  if (call.streamed_body) {
    parsed = read_streamed_commit(call, staged);
    if (!parsed) return;
  } else {
    const bool is_json = call.req.get_header_value("Content-Type").starts_with("application/json");
    auto body = parse_commit_body(call.body, is_json);
    if (!body) return send_error(call.res, 400, "BadRequest", "malformed commit: " + body.error().message);
    parsed = std::move(*body);
  }
  for (const auto& change : parsed->changes) {
    // Fail fast on unknown LFS objects, before any inline blob is written.
    if (change.op.kind == CommitOperation::Kind::kAddBlob && change.op.lfs && !store->blob_size(change.op.sha256)) {
      return send_error(call.res, 400, "LfsObjectNotFound",
                        "lfsFile `" + change.op.path + "` names sha256 " + change.op.sha256 +
                            ", which was never uploaded; upload it through the LFS batch API first");
    }
  }
  std::string branch = revision.starts_with("refs/heads/") ? revision.substr(11) : revision;
  if (!repo->branches.contains(branch)) {
    if (create_pr || !store->resolve(*repo, revision)) {
      // The Hub opens pull requests against branches only, never against a tag or a commit.
      return send_error(call.res, 404, "RevisionNotFound", "Invalid rev id: " + revision);
    }
    return send_error(call.res, 400, "BadRequest",
                      "`" + revision + "` is a tag or a commit; commits can only be made on a branch");
  }
  std::string pr_url;
  if (create_pr) {
    Discussion pr;
    pr.title = parsed->summary.empty() ? "Upload files with kernelhub" : parsed->summary;
    pr.description = parsed->description;
    pr.author = call.who->user;
    pr.created_at = iso8601_now();
    pr.status = "open";
    pr.is_pull_request = true;
    pr.target_branch = branch;
    auto num = store->open_discussion(key, pr, repo->branches.at(branch));
    if (!num) return send_error(call.res, 500, "InternalError", num.error().message);
    if (*num == 0) return send_error(call.res, 404, "RepoNotFound", "Repository " + key.id() + " was deleted");
    branch = "refs/pr/" + std::to_string(*num);
    pr_url = repo_url(key) + "/discussions/" + std::to_string(*num);
  }
  CommitRequest request;
  request.branch = branch;
  request.title = parsed->summary.empty() ? "Upload files with kernelhub" : parsed->summary;
  request.message = parsed->description;
  request.parent_commit = parsed->parent;
  request.author = call.who->user;
  for (auto& change : parsed->changes) {
    if (change.inline_content) {
      auto sha = store->put_blob(*change.inline_content);
      if (!sha) return send_error(call.res, 500, "InternalError", sha.error().message);
    }
    request.operations.push_back(std::move(change.op));
  }
  for (auto& blob : staged) {
    if (store->blob_size(blob.sha256)) continue;  // already stored; the staged copy is dropped
    const fs::path target = store->blob_path(blob.sha256);
    std::error_code ec;
    fs::create_directories(target.parent_path(), ec);
    if (auto moved = blob.file.commit_to(target, Durability::kFull); !moved) {
      return send_error(call.res, 500, "InternalError", moved.error().message);
    }
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
      // The Hub's words (huggingface_hub's tests match them); what moved is in X-Error-Message too.
      return send_error(call.res, 412, "ParentCommitMismatch",
                        "The branch was updated since you opened this page. Please refresh and try again. (`" + branch +
                            "` is at " + outcome->detail + ", not at parentCommit " + parsed->parent.value_or("") +
                            ")");
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
  if (create_pr) out["pullRequestUrl"] = pr_url;
  send_json(call.res, 200, out);
}

}  // namespace kernelhub::server
