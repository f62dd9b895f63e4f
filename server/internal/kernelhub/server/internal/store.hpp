// Store: the server's durable state under --root, the same model as the Hub's git+LFS storage.
//
//   <root>/
//     secret                              HMAC key for storage URLs (created once, 0600)
//     blobs/<sha256[0:2]>/<sha256>        content-addressed file bytes, every file of every repo
//     repos/<type>s/<ns|->/<name>/
//       repo.json                         visibility, gating, creation date
//       refs.json                         branches and tags → commit id
//       commits/<commit-id>.json          immutable: parent, message, date, path → file entry
//     moved.json                          old repo ids → where those repos were moved to
//     tmp/                                in-flight writes (emptied on open)
//
// Note [Durable publish]: every file is written to tmp/, fsync'ed, renamed into place and its
// directory fsync'ed. A commit writes its blobs first, then its commit file, then refs.json;
// a crash at any point leaves either the old ref (plus unreferenced, harmless files) or the
// new one, never a ref to something missing. A restart serves exactly what was committed.
//
// Thread safety: all methods may be called concurrently. Reads take a snapshot (shared_ptr to
// immutable state) and never block on disk I/O of writers; writes to the store are serialized.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "kernelhub/base/result.hpp"
#include "kernelhub/server/internal/repo_key.hpp"

namespace kernelhub::server {

struct FileEntry {
  std::string sha256;    // 64 hex: the blob's name in the store
  std::string git_sha1;  // 40 hex: git blob id, the ETag of a regular file
  std::uint64_t size = 0;
  bool lfs = false;  // served through the storage host (302), listed with an `lfs` object
};

struct Commit {
  std::string id;  // 40 hex
  std::string parent;
  std::string title;
  std::string message;
  std::string date;                        // ISO 8601 UTC
  std::map<std::string, FileEntry> files;  // path → entry; directories are implied
  std::vector<std::string> authors;        // user names (empty in stores written before authors)
};

// A user's request for access to a gated repo (hub-protocol: /user-access-request/*).
struct AccessRequest {
  std::string user;
  std::string status;  // "pending", "accepted" or "rejected"
  std::string timestamp;
  std::string rejection_reason;
};

// A discussion or pull request (/discussions). Numbers are shared by both kinds, from 1, as on
// the Hub; a pull request's changes live on branch `refs/pr/<num>`.
struct Discussion {
  int num = 0;
  std::string title;
  std::string description;
  std::string author;
  std::string created_at;
  std::string status;  // "open", "closed", "merged" or "draft"
  bool is_pull_request = false;
  std::string target_branch;  // pull requests: the branch it would merge into
};

struct RepoMeta {
  bool is_private = false;
  std::string gated;                      // "" (not gated), "auto" or "manual"
  std::vector<std::string> gated_access;  // users granted access to a gated repo (kernelhub extension)
  std::string created_at;
  std::vector<AccessRequest> access_requests;
  std::vector<Discussion> discussions;
};

struct RepoState {
  RepoKey key;
  RepoMeta meta;
  std::map<std::string, std::string> branches;  // name → commit id
  std::map<std::string, std::string> tags;
  std::string last_modified;
};

// One change of a commit request, already validated (paths checked by validate_repo_path).
struct CommitOperation {
  enum class Kind { kAddBlob, kDeleteFile, kDeleteFolder };
  Kind kind = Kind::kAddBlob;
  std::string path;
  std::string sha256;                 // kAddBlob: a blob already in the store
  bool lfs = false;                   // kAddBlob: committed as lfsFile
  std::optional<std::uint64_t> size;  // kAddBlob via lfsFile: announced size to check
};

struct CommitRequest {
  std::string branch;
  std::string title;
  std::string message;
  std::optional<std::string> parent_commit;  // 5-40 hex; must match the branch head
  std::vector<CommitOperation> operations;
  std::string author;  // user name recorded in the commit ("" = none)
};

// What a commit did, or the domain reason it was refused (store failures are Errors).
struct CommitOutcome {
  enum class Status {
    kCommitted,
    kRepoNotFound,
    kBranchNotFound,
    kParentMismatch,
    kMissingBlob,
    kSizeMismatch,
    kEntryNotFound
  };
  Status status = Status::kCommitted;
  std::string commit_id;  // kCommitted
  std::string detail;     // the offending path / oid, for the error message
};

class Store {
 public:
  struct Options {
    std::uint64_t lfs_threshold = 10ull * 1024 * 1024;  // regular files at least this big are LFS
  };

  // Opens (creating if needed) a store under `root`, loading every repo's refs. Errors: kIo,
  // kCorruptFile (a repo.json/refs.json that does not parse, named).
  static Result<std::unique_ptr<Store>> open(const std::filesystem::path& root, Options options);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  const std::filesystem::path& root() const { return root_; }
  const std::string& secret() const { return secret_; }
  const Options& options() const { return options_; }

  // --- repos -----------------------------------------------------------------------------
  std::shared_ptr<const RepoState> repo(const RepoKey& key) const;
  // Where a repo that was moved away from `key` is now (one hop), or nullopt.
  std::optional<RepoKey> moved_to(const RepoKey& key) const;
  // Every repo of one type (listing), ordered by id.
  std::vector<std::shared_ptr<const RepoState>> repos(RepoType type) const;
  // The repo whose id equals `key`'s ignoring case (the Hub's ids are case-insensitive), or null.
  std::shared_ptr<const RepoState> repo_ignoring_case(const RepoKey& key) const;
  // Creates a repo with an initial commit holding `.gitattributes` on `main`, as the Hub does,
  // authored by `author`. Returns false if it (or one differing only in case) already exists.
  // Errors: kIo.
  Result<bool> create_repo(const RepoKey& key, RepoMeta meta, const std::string& author = {});
  enum class MoveOutcome { kMoved, kNotFound, kExists };
  // Renames a repo (same type); its commits, refs and settings go with it, and the old id keeps
  // leading to it (moved_to) until a repo takes that id again, as on the Hub. Errors: kIo.
  Result<MoveOutcome> move_repo(const RepoKey& from, const RepoKey& to);
  // Returns false if it did not exist. Errors: kIo.
  Result<bool> delete_repo(const RepoKey& key);
  // Applies `change` to the repo's settings under the write lock, so concurrent changes to other
  // fields (a discussion opened meanwhile) are kept. Returns false if the repo is gone. Errors: kIo.
  Result<bool> update_meta(const RepoKey& key, const std::function<void(RepoMeta&)>& change);

  // --- revisions ---------------------------------------------------------------------------
  // Branch, tag, full commit id or a unique hex prefix (>= 7) of a commit of this repo.
  std::optional<std::string> resolve(const RepoState& repo, std::string_view revision) const;
  // Errors: kNotFound (unknown id), kCorruptFile, kIo.
  Result<std::shared_ptr<const Commit>> commit(const RepoKey& key, std::string_view commit_id) const;

  enum class RefKind { kBranch, kTag };
  enum class RefChange { kDone, kRepoNotFound, kExists, kNotFound };
  // Creates (target set) or deletes (target nullopt) a branch or tag. Errors: kIo.
  Result<RefChange> set_ref(const RepoKey& key, RefKind kind, const std::string& name,
                            std::optional<std::string> target, bool must_not_exist);

  // Applies a commit to a branch. Errors: kIo only; refusals are in the outcome.
  Result<CommitOutcome> apply_commit(const RepoKey& key, const CommitRequest& request);
  // Replaces a branch's history by one commit holding its head's files (super-squash). Outcome
  // kCommitted, kRepoNotFound or kBranchNotFound. Errors: kIo.
  Result<CommitOutcome> squash_branch(const RepoKey& key, const std::string& branch, const std::string& title,
                                      const std::string& author);
  // Removes the LFS files whose sha256 is in `oids` from every commit reachable from a branch or
  // tag, rewriting those histories (new commit ids), as the Hub's permanent LFS deletion with
  // rewriteHistory does. Returns how many refs moved. Errors: kIo.
  Result<std::size_t> remove_lfs_objects(const RepoKey& key, const std::set<std::string>& oids);
  // Opens a discussion (numbered next) and, for a pull request, branch refs/pr/<num> at
  // `base_commit`. Returns the number, or 0 if the repo is gone. Errors: kIo.
  Result<int> open_discussion(const RepoKey& key, Discussion discussion, const std::string& base_commit);

  // --- blobs -------------------------------------------------------------------------------
  std::filesystem::path blob_path(std::string_view sha256) const;
  // Size of a stored blob, nullopt if absent.
  std::optional<std::uint64_t> blob_size(std::string_view sha256) const;
  // Stores bytes held in memory (small `file` commit entries). Returns the sha256. Errors: kIo.
  Result<std::string> put_blob(std::string_view bytes);
  // Moves a complete, fsync'ed temp file (under tmp_dir()) into the blob store as `sha256`.
  // The caller has verified the digest. Errors: kIo.
  Status adopt_blob(const std::filesystem::path& temp_file, std::string_view sha256);
  // A directory for in-flight files on the same file system as blobs/.
  std::filesystem::path tmp_dir() const { return root_ / "tmp"; }
  // The bytes of a stored blob of at most `max_bytes` (repo files the server itself reads, such as
  // .gitattributes). Errors: kNotFound, kInvalidArgument (larger), kIo.
  Result<std::string> read_blob(std::string_view sha256, std::uint64_t max_bytes) const;
  // The git blob sha1 of a stored blob (cached). Errors: kNotFound, kIo.
  Result<std::string> git_sha1_of_blob(std::string_view sha256) const;

 private:
  Store(std::filesystem::path root, Options options);
  std::filesystem::path repo_dir(const RepoKey& key) const;
  Status load_all();
  Status write_repo_files(const RepoState& state, bool write_meta);
  // moved.json from moved_; called under write_mutex_.
  Status write_moved();
  // Under write_mutex_: writes the repo's files, then publishes the new state.
  Status save(std::shared_ptr<RepoState> state, bool write_meta);
  Result<std::shared_ptr<const Commit>> write_commit(const RepoKey& key, Commit commit);
  void publish(std::shared_ptr<const RepoState> state);

  std::filesystem::path root_;
  Options options_;
  std::string secret_;

  mutable std::shared_mutex state_mutex_;  // guards repos_
  std::map<RepoKey, std::shared_ptr<const RepoState>> repos_;
  std::map<RepoKey, RepoKey> moved_;  // old id → new id (moved.json), guarded by state_mutex_
  mutable std::mutex commits_mutex_;  // guards commits_ (cache of immutable files)
  mutable std::map<std::string, std::shared_ptr<const Commit>> commits_;
  std::mutex write_mutex_;  // serializes every change to the store
};

}  // namespace kernelhub::server
