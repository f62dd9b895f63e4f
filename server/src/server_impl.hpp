// Private: the state behind Server and the helpers every route file shares.
#pragma once

#include <httplib.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "kernelhub/base/internal/atomic_file.hpp"
#include "kernelhub/server/internal/access_policy.hpp"
#include "kernelhub/server/internal/server.hpp"
#include "kernelhub/server/internal/store.hpp"
#include "upload_requests.hpp"

namespace kernelhub::server {

using nlohmann::json;

// One request, parsed once: decoded path segments, query, caller identity, small body.
struct Call {
  const httplib::Request& req;
  httplib::Response& res;
  std::vector<std::string> segs;                  // decoded path segments
  std::multimap<std::string, std::string> query;  // decoded query
  const TokenInfo* who = nullptr;                 // nullptr = anonymous
  std::string body;                               // POST/PUT/DELETE body (bounded)
  // An NDJSON commit's body is not read into `body`: its route streams it from here.
  const httplib::ContentReader* streamed_body = nullptr;

  bool query_flag(const std::string& key) const;  // ?key=1|true
  std::string query_value(const std::string& key) const;
};

// Hub-style error answers (what huggingface_hub `hf_raise_for_status` reads): status, X-Error-Code, X-Error-Message,
// JSON.
void send_error(httplib::Response& res, int status, std::string_view code, std::string_view message,
                std::string_view repo_commit = {});
void send_json(httplib::Response& res, int status, const json& body);
// After a route answered: an ETag on what mark_cacheable made cacheable, and 304 for a matching
// If-None-Match (cache_policy.cpp).
void answer_conditionally(const httplib::Request& req, httplib::Response& res);
std::string dump_json(const json& value);

struct Server::Impl {
  ServerOptions options;
  std::unique_ptr<Store> store;
  AccessPolicy policy;
  httplib::Server http;
  std::thread thread;
  int port = 0;
  std::string public_url;
  std::string storage_url;
  std::atomic<bool> running{false};
  std::atomic<bool> listen_returned{false};  // the listen loop ended (or never began: start() waits for either)
  int listen_fd = -1;                        // the listening socket, once bound (owned by `http`)
  std::mutex faults_mutex;
  std::set<std::string> faulted_blobs;         // blobs whose first storage GET was cut (fault injection)
  std::atomic<bool> upload_fault_done{false};  // the one upload cut has happened

  // Fault injection: true (once) when an upload of `length` bytes is to be cut.
  bool take_upload_fault(std::uint64_t length);
  // Drops the connection: headers go out, the body never does, so the client sees a cut.
  static void drop_connection(httplib::Response& res);

  void install_routes();
  void dispatch(const httplib::Request& req, httplib::Response& res, const httplib::ContentReader* reader);
  void route(const httplib::Request& req, httplib::Response& res, const httplib::ContentReader* reader);
  // route's steps (server.cpp): the API's routes, one repo's API routes after its id, the web
  // routes (downloads, the LFS batch API). Each answers a path none of its routes serves with 404.
  void route_api(Call& call);
  void route_repo_api(Call& call, const RepoKey& key, std::size_t sub);
  void route_web(Call& call);

  // --- access (each answers the Hub's error itself and returns nullptr on refusal) --------
  std::shared_ptr<const RepoState> readable_repo(Call& call, const RepoKey& key);
  std::shared_ptr<const RepoState> writable_repo(Call& call, const RepoKey& key);
  // A repo the caller may open a pull request on: readable, and a token that may write (the
  // Hub lets anyone with a write token propose changes to any repo they can see).
  std::shared_ptr<const RepoState> contributable_repo(Call& call, const RepoKey& key);
  // The stored spelling of a repo id that differs only in case (the Hub's ids are
  // case-insensitive); `key` itself when there is none.
  RepoKey canonical(RepoKey key) const;
  bool check_gate(Call& call, const RepoState& repo);
  // Resolves `revision` to a commit of `repo`, or answers 404 RevisionNotFound.
  std::shared_ptr<const Commit> commit_at(Call& call, const RepoState& repo, const std::string& revision);

  // --- URLs --------------------------------------------------------------------------------
  std::string repo_url(const RepoKey& key) const;  // {public}/{prefix}{id}
  std::string api_base(const RepoKey& key) const;  // {public}/api/{T}s/{id}
  std::string sign(std::string_view message) const;
  bool check_signature(Call& call, std::string_view message);

  // --- shared caches (cache_policy.cpp, Note [Answers a shared cache may keep]) ------------
  // Cache-Control for an answer about `repo` (nullptr: about no repo, e.g. an organization):
  // `pinned` answers (asked by full commit id) never change; others may move with a publish.
  void mark_cacheable(Call& call, const RepoState* repo, bool pinned) const;

  // --- routes (routes_download.cpp) ------------------------------------------------------
  void resolve_file(Call& call, const RepoKey& key, const std::string& revision, const std::string& path);
  void storage_get(Call& call, const std::string& sha256);
  void serve_blob(Call& call, const std::string& sha256, std::uint64_t size, bool allow_fault);

  // --- routes (routes_api.cpp) ------------------------------------------------------------
  void repo_info(Call& call, const RepoKey& key, const std::string& revision);
  void tree(Call& call, const RepoKey& key, const std::string& revision, const std::string& path);
  void paths_info(Call& call, const RepoKey& key, const std::string& revision);
  void refs(Call& call, const RepoKey& key);
  // GET /api/{T}s/{repo}/commits/{rev}: the history from `rev` back to the first commit, newest
  // first, as huggingface_hub's list_repo_commits reads it (one page).
  void commits(Call& call, const RepoKey& key, const std::string& revision);
  void whoami(Call& call);
  void organization_overview(Call& call, const std::string& org);
  void agent_harnesses(Call& call);
  void create_repo(Call& call);
  void validate_yaml(Call& call);
  void delete_repo(Call& call);
  void update_settings(Call& call, const RepoKey& key);
  void create_branch(Call& call, const RepoKey& key, const std::string& branch);
  void delete_ref(Call& call, const RepoKey& key, Store::RefKind kind, const std::string& name);
  void create_tag(Call& call, const RepoKey& key, const std::string& revision);

  // --- routes (routes_repos.cpp) ----------------------------------------------------------
  // GET /api/{T}s: the repos of one type the caller may see, with the Hub's filters.
  void list_repos(Call& call, RepoType type);
  void move_repo(Call& call);
  void auth_check(Call& call, const RepoKey& key, bool write);
  void super_squash(Call& call, const RepoKey& key, const std::string& branch);
  void list_lfs_files(Call& call, const RepoKey& key);
  // GET /api/settings/repositories (the caller's repos) and
  // /api/organizations/{org}/settings/repositories: every repo of the namespace, any type, with the
  // bytes its history keeps (huggingface_hub list_user_repos, `hf repos ls`).
  void repository_storage(Call& call, const std::string& org);
  void delete_lfs_files(Call& call, const RepoKey& key);
  void list_access_requests(Call& call, const RepoKey& key, const std::string& status);
  void handle_access_request(Call& call, const RepoKey& key, bool grant);

  // --- routes (routes_discussions.cpp) ----------------------------------------------------
  void list_discussions(Call& call, const RepoKey& key);
  void create_discussion(Call& call, const RepoKey& key);
  void discussion_details(Call& call, const RepoKey& key, const std::string& num);

  // --- routes (routes_upload.cpp) ---------------------------------------------------------
  // Whether `revision` is refs/pr/N of a pull request the caller opened: its author may push to
  // it without write access to the repo, as on the Hub.
  bool is_own_pull_request(const Call& call, const RepoKey& key, const std::string& revision) const;
  void preupload(Call& call, const RepoKey& key, const std::string& revision);
  void lfs_batch(Call& call, const RepoKey& key);
  void lfs_verify(Call& call, const RepoKey& key);
  void commit(Call& call, const RepoKey& key, const std::string& revision);
  // An inline file of a streamed commit, written to tmp/ while its line was read; moved into
  // blobs/ only once the whole commit has been read and checked (removed otherwise).
  struct StagedBlob {
    TempFile file;
    std::string sha256;
  };
  // Reads call.streamed_body line by line into the parser, staging inline files in `staged`.
  // Answers the error itself and returns nullopt on failure.
  std::optional<ParsedCommit> read_streamed_commit(Call& call, std::vector<StagedBlob>& staged);
  void lfs_upload(Call& call, const httplib::ContentReader& reader, const std::string& sha256);
  void lfs_upload_part(Call& call, const httplib::ContentReader& reader, const std::string& sha256,
                       const std::string& part);
  void lfs_complete(Call& call, const std::string& sha256);
};

void drop_ranges_unless_file(const httplib::Request& req, const httplib::Response& res);

// The tree/paths-info entry for a file.
json file_entry_json(const std::string& path, const FileEntry& entry);
std::string lfs_pointer_text(std::string_view sha256, std::uint64_t size);

}  // namespace kernelhub::server
