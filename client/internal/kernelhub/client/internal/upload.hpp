// HubUploader: the write side of the Hub API, as huggingface_hub's create_commit speaks it
// without Xet (docs/SERVER.md lists the routes): create a repo, read and create branches, classify files
// with `preupload`, send LFS content through the git-lfs batch API (basic PUT, or multipart parts
// plus a completion call, then `verify`), and make one NDJSON commit.
//
// Only the Hub API requests carry the token; the storage URLs the batch call hands out are signed
// and never see it. Retries follow huggingface_hub (preupload, LFS batch, PUTs and verify with
// backoff on 408/429/5xx and network errors); the commit is never retried, because a lost answer
// would otherwise make a second commit. A commit names its parent, so a branch that moved since
// the plan is refused by the server instead of being overwritten.
//
// Errors (each message names the repo and what was being done):
//   kUnauthorized     no token, a wrong or expired one, or one without write access
//   kNotFound         repo or branch does not exist
//   kInvalidArgument  the server refused a file or the commit (its reason is quoted)
//                     (also a branch that moved since the plan: the message says to re-run)
//   kNetwork          connection, timeout or HTTP failure after every retry
//   kIo               a local file could not be read
//
// Thread safety: the methods are const and may be called from several threads at once.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernelhub/base/result.hpp"
#include "kernelhub/client/internal/repo_tree.hpp"
#include "kernelhub/client/internal/settings.hpp"
#include "kernelhub/client/internal/transport.hpp"
#include "kernelhub/client/repo_id.hpp"

namespace kernelhub::client {

// A local file to put at `path_in_repo`.
struct UploadFile {
  std::string path_in_repo;
  std::filesystem::path local;
  std::uint64_t size = 0;
  std::string sha256;    // hex, of the content
  std::string git_sha1;  // hex, git blob id of the content
  std::string sample;    // the first 512 bytes, for preupload
};

// Reads, hashes and samples a local file. Errors: kIo.
Result<UploadFile> describe_upload_file(const std::filesystem::path& local, std::string path_in_repo);

enum class UploadMode { kRegular, kLfs };

// What preupload said about one file.
struct PreuploadAnswer {
  std::string path;
  UploadMode mode = UploadMode::kRegular;
  bool should_ignore = false;
  std::optional<std::string> remote_oid;  // sha256 (LFS) or git sha1 (regular) of the file there now
};

// One change of a commit.
struct CommitChange {
  enum class Kind { kAddRegular, kAddLfs, kDeleteFile };
  Kind kind = Kind::kAddRegular;
  const UploadFile* file = nullptr;  // for adds; must outlive the commit call
  std::string path;                  // for deletes
};

struct CommitResult {
  std::string commit_oid;
  std::string commit_url;
};

// What an LFS upload did, for the report and the resume test.
struct LfsUploadStats {
  int objects_sent = 0;     // objects whose bytes went over the wire
  int objects_present = 0;  // objects the server already had (batch answered without actions)
  std::uint64_t bytes_sent = 0;
  int multipart_objects = 0;
};

class HubUploader {
 public:
  // REQUIRES: transport != nullptr.
  HubUploader(Settings settings, std::shared_ptr<Transport> transport);

  const Settings& settings() const { return settings_; }

  // GET /api/whoami-v2: the user name behind the token. kUnauthorized without a valid token.
  Result<std::string> whoami() const;

  // POST /api/repos/create. An existing repo is fine when `exist_ok`.
  Status create_repo(const RepoId& repo, RepoType type, bool is_private, bool exist_ok) const;

  // The commit a branch points at, or nullopt when the repo has no such branch.
  // Errors: kNotFound when the repo does not exist.
  Result<std::optional<std::string>> branch_head(const RepoId& repo, RepoType type, const std::string& branch) const;

  // POST /api/{T}s/{repo}/branch/{branch} from `starting_point` (a commit or branch).
  Status create_branch(const RepoId& repo, RepoType type, const std::string& branch,
                       const std::string& starting_point) const;

  // Every file of the repo at `commit` (recursive tree API, all pages; not cached).
  Result<RepoTree> list_files(const RepoId& repo, RepoType type, const std::string& commit) const;

  // POST /api/{T}s/{repo}/preupload/{revision}, in chunks of 256 files.
  Result<std::vector<PreuploadAnswer>> preupload(const RepoId& repo, RepoType type, const std::string& revision,
                                                 const std::vector<const UploadFile*>& files) const;

  // LFS batch for `files` (≤256 per call), then the bytes of every object the server lacks
  // (basic or multipart), then verify. `on_bytes` is told of each slice sent (progress).
  Result<LfsUploadStats> upload_lfs(const RepoId& repo, RepoType type, const std::string& revision,
                                    const std::vector<const UploadFile*>& files,
                                    const std::function<void(std::uint64_t)>& on_bytes = {}) const;

  // POST /api/{T}s/{repo}/commit/{branch} as NDJSON, with `parent` as parentCommit. Not retried.
  Result<CommitResult> commit(const RepoId& repo, RepoType type, const std::string& branch,
                              const std::optional<std::string>& parent, const std::string& summary,
                              const std::string& description, const std::vector<CommitChange>& changes) const;

 private:
  Settings settings_;
  std::shared_ptr<Transport> transport_;
};

}  // namespace kernelhub::client
