#include "publish.hpp"

#include <deque>
#include <map>
#include <set>

#include "kernelhub/fetch/signature_check.hpp"
#include "kernelhub/signing/signature_file.hpp"

namespace kernelhub::publish {

namespace {

using client::CommitChange;
using client::UploadFile;

bool same_content(const client::TreeEntry& remote, const UploadFile& local) {
  return remote.lfs_sha256 ? *remote.lfs_sha256 == local.sha256 : remote.blob_id == local.git_sha1;
}

std::string web_url(const client::Settings& settings, const client::RepoId& repo, RepoType type) {
  return settings.endpoint + "/" + std::string(url_prefix(type)) + repo.to_string();
}

// preupload, then LFS content; returns the commit lines for `files`.
Result<std::vector<CommitChange>> send_content(const PublishRequest& request, const client::HubUploader& hub,
                                               const std::string& revision, const std::vector<const UploadFile*>& files,
                                               client::ProgressReporter& progress, client::LfsUploadStats& stats) {
  std::vector<CommitChange> changes;
  if (files.empty()) return changes;
  KH_ASSIGN_OR_RETURN(auto answers, hub.preupload(request.repo, request.type, revision, files));
  std::map<std::string, client::PreuploadAnswer> by_path;
  for (auto& a : answers) by_path.emplace(a.path, std::move(a));
  std::vector<const UploadFile*> lfs;
  std::string ignored;
  for (const UploadFile* f : files) {
    auto it = by_path.find(f->path_in_repo);
    // Like huggingface_hub: zero-byte files are always regular; unknown paths default to regular.
    const bool is_lfs = f->size > 0 && it != by_path.end() && it->second.mode == client::UploadMode::kLfs;
    if (it != by_path.end() && it->second.should_ignore) ignored += " `" + f->path_in_repo + "`";
    if (is_lfs) lfs.push_back(f);
    changes.push_back(CommitChange{is_lfs ? CommitChange::Kind::kAddLfs : CommitChange::Kind::kAddRegular, f, {}});
  }
  if (!ignored.empty()) {
    return unexpected(ErrorCode::kInvalidArgument,
                      "the Hub would ignore these files (its .gitignore):" + ignored +
                          "; remove them from the build dir or from the repo's .gitignore; nothing was committed");
  }
  std::uint64_t lfs_bytes = 0;
  for (const UploadFile* f : lfs) lfs_bytes += f->size;
  progress.start("uploading", lfs_bytes, static_cast<int>(lfs.size()));
  auto uploaded =
      hub.upload_lfs(request.repo, request.type, revision, lfs, [&](std::uint64_t bytes) { progress.add(bytes); });
  progress.finish();
  if (!uploaded) return unexpected(uploaded.error());
  stats = *uploaded;
  return changes;
}

}  // namespace

Result<PublishReport> publish(const PublishRequest& request, const client::HubUploader& hub,
                              client::ProgressReporter& progress) {
  PublishReport report;
  report.branch = request.branch;
  report.url = web_url(hub.settings(), request.repo, request.type) + "/tree/" + request.branch;

  // 1. Local content, hashed once.
  std::deque<UploadFile> local;  // stable addresses for the pointers below
  for (const VariantDir& v : request.variants) {
    for (const auto& rel : v.files) {
      KH_ASSIGN_OR_RETURN(UploadFile f,
                          client::describe_upload_file(v.dir / rel, "build/" + v.name + "/" + rel.generic_string()));
      report.bytes_total += f.size;
      local.push_back(std::move(f));
    }
    if (v.bundle) {
      KH_ASSIGN_OR_RETURN(UploadFile f, client::describe_upload_file(
                                            *v.bundle, "build/" + v.name + "/" + std::string(kSigstoreBundleName)));
      report.bytes_total += f.size;
      local.push_back(std::move(f));
    }
  }
  std::optional<UploadFile> card;
  if (request.card) {
    KH_ASSIGN_OR_RETURN(UploadFile f, client::describe_upload_file(*request.card, "README.md"));
    // Publishing to main itself: the card rides in the same commit.
    if (request.branch == "main") {
      local.push_back(std::move(f));
    } else {
      card = std::move(f);
    }
  }
  if (request.dry_run) {
    for (const UploadFile& f : local) report.files.push_back({f.path_in_repo, f.size, "add"});
    return report;
  }

  // 2. What is there now.
  // The token first: a wrong or expired one is the likeliest failure, and says so best here.
  KH_ASSIGN_OR_RETURN(std::string user, hub.whoami());
  (void)user;
  if (request.create) KH_RETURN_IF_ERROR(hub.create_repo(request.repo, request.type, request.is_private, true));
  auto head_or = hub.branch_head(request.repo, request.type, request.branch);
  if (!head_or) {
    if (head_or.error().code == ErrorCode::kNotFound && !request.create) {
      return unexpected(Error{
          ErrorCode::kNotFound,
          "repo `" + request.repo.to_string() +
              "` does not exist (or the token cannot see it); pass --create to create it: " + head_or.error().message,
          Missing::kRepo});
    }
    return unexpected(head_or.error());
  }
  const std::optional<std::string> head = *head_or;
  KH_ASSIGN_OR_RETURN(const std::optional<std::string> main_head, hub.branch_head(request.repo, request.type, "main"));
  if (!head && !main_head) {
    return unexpected(Error{ErrorCode::kNotFound,
                            "repo `" + request.repo.to_string() + "` has neither branch `" + request.branch +
                                "` nor `main` to start it from",
                            Missing::kRevision});
  }
  const std::string base = head ? *head : *main_head;
  KH_ASSIGN_OR_RETURN(client::RepoTree remote, hub.list_files(request.repo, request.type, base));
  std::map<std::string, const client::TreeEntry*> remote_by_path;
  for (const auto& e : remote.files) remote_by_path.emplace(e.path, &e);

  std::vector<const UploadFile*> to_send;
  std::set<std::string> local_paths;
  for (const UploadFile& f : local) {
    local_paths.insert(f.path_in_repo);
    auto it = remote_by_path.find(f.path_in_repo);
    const bool unchanged = it != remote_by_path.end() && same_content(*it->second, f);
    report.files.push_back(
        {f.path_in_repo, f.size, unchanged ? "unchanged" : (it == remote_by_path.end() ? "add" : "update")});
    if (!unchanged) to_send.push_back(&f);
  }
  // A variant is replaced whole: files of an earlier build that this one lacks are deleted (a
  // bundle when this build is not signed: it would sign other bytes), and so is a kernelhub.sig
  // beside it (signature layout v2, signing/signature_file.hpp).
  std::vector<CommitChange> deletions;
  for (const VariantDir& v : request.variants) {
    std::vector<const client::TreeEntry*> earlier = remote.under("build/" + v.name + "/");
    for (const auto* e : remote.under(signing::signature_repo_path(v.name))) {
      if (e->path == signing::signature_repo_path(v.name)) earlier.push_back(e);
    }
    for (const auto* e : earlier) {
      if (local_paths.contains(e->path)) continue;
      deletions.push_back(CommitChange{CommitChange::Kind::kDeleteFile, nullptr, e->path});
      report.files.push_back({e->path, e->size, "delete"});
    }
  }

  // 3-4. Content, branch, one commit.
  report.commit = base;
  if (!to_send.empty() || !deletions.empty()) {
    const std::string revision = head ? request.branch : "main";
    KH_ASSIGN_OR_RETURN(auto changes, send_content(request, hub, revision, to_send, progress, report.lfs));
    for (auto& d : deletions) changes.push_back(std::move(d));
    if (!head) {
      KH_RETURN_IF_ERROR(hub.create_branch(request.repo, request.type, request.branch, *main_head));
      report.branch_created = true;
    }
    const std::string summary = "Publish " + std::to_string(request.variants.size()) + " build variant" +
                                (request.variants.size() == 1 ? "" : "s") + " with hub-publish";
    std::string description = "Variants:\n";
    for (const VariantDir& v : request.variants) description += "- " + v.name + "\n";
    KH_ASSIGN_OR_RETURN(auto made,
                        hub.commit(request.repo, request.type, request.branch, base, summary, description, changes));
    report.commit = made.commit_oid;
    report.commit_url = made.commit_url;
    report.committed = true;
  } else if (!head) {
    KH_RETURN_IF_ERROR(hub.create_branch(request.repo, request.type, request.branch, *main_head));
    report.branch_created = true;
  }

  // 5. The card, to main.
  if (card && main_head) {
    KH_ASSIGN_OR_RETURN(client::RepoTree main_tree, hub.list_files(request.repo, request.type, *main_head));
    const auto* readme = [&]() -> const client::TreeEntry* {
      for (const auto& e : main_tree.files) {
        if (e.path == "README.md") return &e;
      }
      return nullptr;
    }();
    if (readme == nullptr || !same_content(*readme, *card)) {
      client::LfsUploadStats card_stats;
      KH_ASSIGN_OR_RETURN(auto changes, send_content(request, hub, "main", {&*card}, progress, card_stats));
      KH_ASSIGN_OR_RETURN(
          auto made, hub.commit(request.repo, request.type, "main", *main_head, "Update the kernel card", "", changes));
      report.card_commit = made.commit_oid;
    }
  }
  if (report.commit_url.empty())
    report.commit_url = web_url(hub.settings(), request.repo, request.type) + "/commit/" + report.commit;
  return report;
}

}  // namespace kernelhub::publish
