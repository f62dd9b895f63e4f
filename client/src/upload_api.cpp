// HubUploader: the Hub API requests of an upload (docs/SERVER.md lists the routes). The LFS content
// transfer itself is in upload_lfs.cpp; both share upload_call.hpp.
#include <algorithm>
#include <cerrno>
#include <nlohmann/json.hpp>

#include "hub_answers.hpp"
#include "kernelhub/base/internal/base64.hpp"
#include "kernelhub/base/internal/git_blob_sha1.hpp"
#include "kernelhub/base/internal/percent_encoding.hpp"
#include "kernelhub/base/internal/read_file.hpp"
#include "kernelhub/base/internal/sha256.hpp"
#include "kernelhub/base/internal/unique_file.hpp"
#include "kernelhub/client/internal/upload.hpp"
#include "upload_call.hpp"
#include "url.hpp"

namespace kernelhub::client {

namespace {

using nlohmann::json;

std::optional<std::string> next_page(const Response& response) {
  const std::string* link = response.header("link");
  if (!link) return std::nullopt;
  const auto rel = link->find("rel=\"next\"");
  if (rel == std::string::npos) return std::nullopt;
  const auto open = link->rfind('<', rel);
  const auto close = link->find('>', open);
  if (open == std::string::npos || close == std::string::npos || close > rel) return std::nullopt;
  return link->substr(open + 1, close - open - 1);
}

}  // namespace

Result<UploadFile> describe_upload_file(const std::filesystem::path& local, std::string path_in_repo) {
  UniqueFile in = open_file(local, "rb");
  if (!in) return unexpected(os_error("open `" + local.string() + "` for upload", errno));
  std::error_code ec;
  const auto size = std::filesystem::file_size(local, ec);
  if (ec) return unexpected(ErrorCode::kIo, "cannot stat `" + local.string() + "`: " + ec.message());
  UploadFile file;
  file.path_in_repo = std::move(path_in_repo);
  file.local = local;
  file.size = size;
  Sha256 sha;
  GitBlobSha1 git(size);
  std::vector<char> buffer(1 << 20);
  std::uint64_t total = 0;
  while (true) {
    const std::size_t n = std::fread(buffer.data(), 1, buffer.size(), in.get());
    if (n == 0) {
      if (std::ferror(in.get())) return unexpected(ErrorCode::kIo, "cannot read `" + local.string() + "`");
      break;
    }
    if (file.sample.size() < 512) {
      file.sample.append(buffer.data(), std::min<std::size_t>(512 - file.sample.size(), n));
    }
    sha.update(buffer.data(), n);
    git.update(buffer.data(), n);
    total += n;
  }
  if (total != size) {
    return unexpected(ErrorCode::kIo, "`" + local.string() + "` changed size while it was read; stop what writes it");
  }
  file.sha256 = to_hex(sha.finish());
  file.git_sha1 = git.finish_hex();
  return file;
}

HubUploader::HubUploader(Settings settings, std::shared_ptr<Transport> transport)
    : settings_(std::move(settings)), transport_(std::move(transport)) {}

Result<std::string> HubUploader::whoami() const {
  UploadCall call{settings_, *transport_};
  if (!settings_.token) {
    return unexpected(ErrorCode::kUnauthorized,
                      "publishing needs a token with write access: set HF_TOKEN (or log in with `hf auth login`)");
  }
  KH_ASSIGN_OR_RETURN(
      auto answer, call.api("GET", settings_.endpoint + "/api/whoami-v2", "", "", "checking the token (whoami)", true));
  const json doc = json::parse(answer.body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("name") || !doc["name"].is_string()) {
    return unexpected(ErrorCode::kNetwork, "whoami answer has no user `name`: " + answer.body.substr(0, 200));
  }
  return doc["name"].get<std::string>();
}

Status HubUploader::create_repo(const RepoId& repo, RepoType type, bool is_private, bool exist_ok) const {
  UploadCall call{settings_, *transport_};
  json body = {{"name", repo.name}, {"organization", repo.org}, {"private", is_private}};
  if (type != RepoType::kModel) body["type"] = std::string(to_string(type));
  auto answer = call.api("POST", settings_.endpoint + "/api/repos/create", body.dump(), "application/json",
                         "creating " + repo_label(repo, type), false, /*accept_409=*/true);
  if (!answer) return unexpected(answer.error());
  if (answer->status == 409 && !exist_ok) {
    return unexpected(ErrorCode::kInvalidArgument, repo_label(repo, type) + " already exists");
  }
  return {};
}

Result<std::optional<std::string>> HubUploader::branch_head(const RepoId& repo, RepoType type,
                                                            const std::string& branch) const {
  UploadCall call{settings_, *transport_};
  KH_ASSIGN_OR_RETURN(auto answer, call.api("GET", api_base(settings_, repo, type) + "/refs", "", "",
                                            "listing the branches of " + repo_label(repo, type), true));
  auto branches = parse_refs_answer(answer.body);
  if (!branches) return unexpected(branches.error().with_context("listing the branches of " + repo_label(repo, type)));
  for (auto& b : *branches) {
    if (b.name == branch) return std::optional<std::string>(std::move(b.commit));
  }
  return std::optional<std::string>();
}

Status HubUploader::create_branch(const RepoId& repo, RepoType type, const std::string& branch,
                                  const std::string& starting_point) const {
  UploadCall call{settings_, *transport_};
  const json body = {{"startingPoint", starting_point}};
  auto answer = call.api("POST", api_base(settings_, repo, type) + "/branch/" + percent_encode(branch), body.dump(),
                         "application/json", "creating branch `" + branch + "` of " + repo_label(repo, type), false,
                         /*accept_409=*/true);
  if (!answer) return unexpected(answer.error());
  return {};
}

Result<RepoTree> HubUploader::list_files(const RepoId& repo, RepoType type, const std::string& commit) const {
  UploadCall call{settings_, *transport_};
  RepoTree tree;
  tree.commit = commit;
  std::string target =
      api_base(settings_, repo, type) + "/tree/" + percent_encode(commit) + "?recursive=true&expand=false";
  while (true) {
    KH_ASSIGN_OR_RETURN(
        auto answer,
        call.api("GET", target, "", "", "listing the files of " + repo_label(repo, type) + " at " + commit, true));
    auto files = parse_tree_page(answer.body);
    if (!files) {
      return unexpected(files.error().with_context("listing the files of " + repo_label(repo, type) + " at " + commit));
    }
    std::move(files->begin(), files->end(), std::back_inserter(tree.files));
    auto next = next_page(answer.response);
    if (!next) break;
    KH_ASSIGN_OR_RETURN(target, url::resolve(target, *next));
  }
  std::sort(tree.files.begin(), tree.files.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
  return tree;
}

Result<std::vector<PreuploadAnswer>> HubUploader::preupload(const RepoId& repo, RepoType type,
                                                            const std::string& revision,
                                                            const std::vector<const UploadFile*>& files) const {
  UploadCall call{settings_, *transport_};
  std::vector<PreuploadAnswer> out;
  for (std::size_t start = 0; start < files.size(); start += 256) {
    json list = json::array();
    for (std::size_t i = start; i < std::min(files.size(), start + 256); ++i) {
      list.push_back(
          {{"path", files[i]->path_in_repo}, {"sample", base64_encode(files[i]->sample)}, {"size", files[i]->size}});
    }
    const json body = {{"files", list}};
    KH_ASSIGN_OR_RETURN(auto answer,
                        call.api("POST", api_base(settings_, repo, type) + "/preupload/" + percent_encode(revision),
                                 body.dump(), "application/json", "planning the upload (preupload)", true));
    const json doc = json::parse(answer.body, nullptr, false);
    if (doc.is_discarded() || !doc.is_object() || !doc.contains("files") || !doc["files"].is_array()) {
      return unexpected(ErrorCode::kNetwork, "preupload answer has no `files` list: " + answer.body.substr(0, 200));
    }
    for (const auto& f : doc["files"]) {
      if (!f.is_object() || !f.contains("path") || !f["path"].is_string()) continue;
      PreuploadAnswer a;
      a.path = f["path"].get<std::string>();
      a.mode = f.contains("uploadMode") && f["uploadMode"] == "lfs" ? UploadMode::kLfs : UploadMode::kRegular;
      a.should_ignore = f.contains("shouldIgnore") && f["shouldIgnore"] == true;
      if (f.contains("oid") && f["oid"].is_string()) a.remote_oid = f["oid"].get<std::string>();
      out.push_back(std::move(a));
    }
  }
  return out;
}

Result<CommitResult> HubUploader::commit(const RepoId& repo, RepoType type, const std::string& branch,
                                         const std::optional<std::string>& parent, const std::string& summary,
                                         const std::string& description,
                                         const std::vector<CommitChange>& changes) const {
  UploadCall call{settings_, *transport_};
  json header = {{"summary", summary}, {"description", description}};
  if (parent && !parent->empty()) header["parentCommit"] = *parent;
  std::string body = json{{"key", "header"}, {"value", header}}.dump() + "\n";
  for (const CommitChange& change : changes) {
    json line;
    switch (change.kind) {
      case CommitChange::Kind::kAddLfs:
        line = {{"key", "lfsFile"},
                {"value",
                 {{"path", change.file->path_in_repo},
                  {"algo", "sha256"},
                  {"oid", change.file->sha256},
                  {"size", change.file->size}}}};
        break;
      case CommitChange::Kind::kAddRegular: {
        KH_ASSIGN_OR_RETURN(std::string content, read_file(change.file->local));
        if (content.size() != change.file->size || git_blob_sha1(content) != change.file->git_sha1) {
          return unexpected(ErrorCode::kIo, "`" + change.file->local.string() +
                                                "` changed since it was planned; nothing was committed, re-run");
        }
        line = {{"key", "file"},
                {"value",
                 {{"path", change.file->path_in_repo}, {"content", base64_encode(content)}, {"encoding", "base64"}}}};
        break;
      }
      case CommitChange::Kind::kDeleteFile: line = {{"key", "deletedFile"}, {"value", {{"path", change.path}}}}; break;
    }
    body += line.dump() + "\n";
  }
  KH_ASSIGN_OR_RETURN(
      auto answer,
      call.api("POST", api_base(settings_, repo, type) + "/commit/" + percent_encode(branch), std::move(body),
               "application/x-ndjson", "committing to branch `" + branch + "` of " + repo_label(repo, type), false));
  const json doc = json::parse(answer.body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("commitOid") || !doc["commitOid"].is_string()) {
    return unexpected(ErrorCode::kNetwork, "commit answer has no `commitOid`: " + answer.body.substr(0, 200));
  }
  const bool has_url = doc.contains("commitUrl") && doc["commitUrl"].is_string();
  return CommitResult{doc["commitOid"].get<std::string>(), has_url ? doc["commitUrl"].get<std::string>() : ""};
}

}  // namespace kernelhub::client
