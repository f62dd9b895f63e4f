#include "publish.hpp"

#include <deque>
#include <map>
#include <set>

#include "kernelhub/fetch/internal/signature_check.hpp"
#include "kernelhub/signing/internal/signature_file.hpp"

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

// Step 1: the files published, hashed once; the card apart unless the branch is main itself.
struct LocalContent {
  std::deque<UploadFile> files;  // stable addresses for the pointers the plan keeps
  std::optional<UploadFile> card;
};

Result<LocalContent> describe_local(const PublishRequest& request, PublishReport& report) {
  LocalContent local;
  for (const VariantDir& v : request.variants) {
    for (const auto& rel : v.files) {
      KH_ASSIGN_OR_RETURN(UploadFile f,
                          client::describe_upload_file(v.dir / rel, "build/" + v.name + "/" + rel.generic_string()));
      report.bytes_total += f.size;
      local.files.push_back(std::move(f));
    }
    if (v.bundle) {
      KH_ASSIGN_OR_RETURN(UploadFile f, client::describe_upload_file(
                                            *v.bundle, "build/" + v.name + "/" + std::string(kSigstoreBundleName)));
      report.bytes_total += f.size;
      local.files.push_back(std::move(f));
    }
  }
  if (request.card) {
    KH_ASSIGN_OR_RETURN(UploadFile f, client::describe_upload_file(*request.card, "README.md"));
    // Publishing to main itself: the card rides in the same commit.
    if (request.branch == "main") {
      local.files.push_back(std::move(f));
    } else {
      local.card = std::move(f);
    }
  }
  return local;
}

// Step 2: what the repo holds now, at the branch's head (or main's, which a new branch starts from).
struct RemoteState {
  std::optional<std::string> head;       // the branch's; nullopt: the branch is made from main
  std::optional<std::string> main_head;  // main's; nullopt in a repo without main
  std::string base;                      // the commit the new one follows
  client::RepoTree tree;                 // the files at `base`
};

Result<RemoteState> read_remote(const PublishRequest& request, const client::HubUploader& hub) {
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
  RemoteState remote;
  remote.head = *head_or;
  KH_ASSIGN_OR_RETURN(remote.main_head, hub.branch_head(request.repo, request.type, "main"));
  if (!remote.head && !remote.main_head) {
    return unexpected(Error{ErrorCode::kNotFound,
                            "repo `" + request.repo.to_string() + "` has neither branch `" + request.branch +
                                "` nor `main` to start it from",
                            Missing::kRevision});
  }
  remote.base = remote.head ? *remote.head : *remote.main_head;
  KH_ASSIGN_OR_RETURN(remote.tree, hub.list_files(request.repo, request.type, remote.base));
  return remote;
}

// The local files whose content the repo lacks; each file's action goes in the report.
std::vector<const UploadFile*> plan_uploads(const std::deque<UploadFile>& local, const client::RepoTree& remote,
                                            PublishReport& report) {
  std::map<std::string, const client::TreeEntry*> remote_by_path;
  for (const auto& e : remote.files) remote_by_path.emplace(e.path, &e);
  std::vector<const UploadFile*> to_send;
  for (const UploadFile& f : local) {
    auto it = remote_by_path.find(f.path_in_repo);
    const bool unchanged = it != remote_by_path.end() && same_content(*it->second, f);
    report.files.push_back(
        {f.path_in_repo, f.size, unchanged ? "unchanged" : (it == remote_by_path.end() ? "add" : "update")});
    if (!unchanged) to_send.push_back(&f);
  }
  return to_send;
}

// A variant is replaced whole: files of an earlier build that this one lacks are deleted (a
// bundle when this build is not signed: it would sign other bytes), and so is a kernelhub.sig
// beside it (signature layout v2, signing/signature_file.hpp).
std::vector<CommitChange> plan_deletions(const PublishRequest& request, const client::RepoTree& remote,
                                         const std::deque<UploadFile>& local, PublishReport& report) {
  std::set<std::string> local_paths;
  for (const UploadFile& f : local) local_paths.insert(f.path_in_repo);
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
  return deletions;
}

// Steps 3-4: the content, the branch (made from main when new), one commit; no commit when
// nothing changed.
Status commit_variants(const PublishRequest& request, const client::HubUploader& hub, const RemoteState& remote,
                       const std::vector<const UploadFile*>& to_send, std::vector<CommitChange> deletions,
                       client::ProgressReporter& progress, PublishReport& report) {
  report.commit = remote.base;
  if (to_send.empty() && deletions.empty()) {
    if (remote.head) return {};
    KH_RETURN_IF_ERROR(hub.create_branch(request.repo, request.type, request.branch, *remote.main_head));
    report.branch_created = true;
    return {};
  }
  const std::string revision = remote.head ? request.branch : "main";
  KH_ASSIGN_OR_RETURN(auto changes, send_content(request, hub, revision, to_send, progress, report.lfs));
  for (auto& d : deletions) changes.push_back(std::move(d));
  if (!remote.head) {
    KH_RETURN_IF_ERROR(hub.create_branch(request.repo, request.type, request.branch, *remote.main_head));
    report.branch_created = true;
  }
  const std::string summary = "Publish " + std::to_string(request.variants.size()) + " build variant" +
                              (request.variants.size() == 1 ? "" : "s") + " with hub-publish";
  std::string description = "Variants:\n";
  for (const VariantDir& v : request.variants) description += "- " + v.name + "\n";
  KH_ASSIGN_OR_RETURN(
      auto made, hub.commit(request.repo, request.type, request.branch, remote.base, summary, description, changes));
  report.commit = made.commit_oid;
  report.commit_url = made.commit_url;
  report.committed = true;
  return {};
}

// Step 5: the card, to main, in a commit of its own when main's README.md differs.
Status publish_card(const PublishRequest& request, const client::HubUploader& hub, const std::string& main_head,
                    const UploadFile& card, client::ProgressReporter& progress, PublishReport& report) {
  KH_ASSIGN_OR_RETURN(client::RepoTree main_tree, hub.list_files(request.repo, request.type, main_head));
  const auto* readme = [&]() -> const client::TreeEntry* {
    for (const auto& e : main_tree.files) {
      if (e.path == "README.md") return &e;
    }
    return nullptr;
  }();
  if (readme != nullptr && same_content(*readme, card)) return {};
  client::LfsUploadStats card_stats;
  KH_ASSIGN_OR_RETURN(auto changes, send_content(request, hub, "main", {&card}, progress, card_stats));
  KH_ASSIGN_OR_RETURN(auto made,
                      hub.commit(request.repo, request.type, "main", main_head, "Update the kernel card", "", changes));
  report.card_commit = made.commit_oid;
  return {};
}

}  // namespace

Result<PublishReport> publish(const PublishRequest& request, const client::HubUploader& hub,
                              client::ProgressReporter& progress) {
  PublishReport report;
  report.branch = request.branch;
  report.url = web_url(hub.settings(), request.repo, request.type) + "/tree/" + request.branch;

  KH_ASSIGN_OR_RETURN(LocalContent local, describe_local(request, report));
  if (request.dry_run) {
    for (const UploadFile& f : local.files) report.files.push_back({f.path_in_repo, f.size, "add"});
    return report;
  }
  KH_ASSIGN_OR_RETURN(RemoteState remote, read_remote(request, hub));
  const std::vector<const UploadFile*> to_send = plan_uploads(local.files, remote.tree, report);
  std::vector<CommitChange> deletions = plan_deletions(request, remote.tree, local.files, report);
  KH_RETURN_IF_ERROR(commit_variants(request, hub, remote, to_send, std::move(deletions), progress, report));
  if (local.card && remote.main_head) {
    KH_RETURN_IF_ERROR(publish_card(request, hub, *remote.main_head, *local.card, progress, report));
  }
  if (report.commit_url.empty())
    report.commit_url = web_url(hub.settings(), request.repo, request.type) + "/commit/" + report.commit;
  return report;
}

}  // namespace kernelhub::publish
