// HubClient: talks to a Hugging Face Hub (or `kernelhub serve`) and fills the shared
// huggingface_hub cache (cache_layout.hpp). A revision is resolved to a commit once; everything
// after that is fetched by commit. File lists come from the tree API, cached in
// trees/<commit>.json; files are downloaded in parallel (libcurl multi, at most
// Settings::max_parallel at once), resumed with Range after a cut, retried with backoff on
// 408/429/5xx and network errors (Retry-After honoured), and verified while they stream: sha256
// for LFS files, git blob sha1 otherwise. A blob becomes visible only complete and verified
// (Note [Atomic publish] in cache_layout.hpp); a .locks/ flock makes concurrent processes,
// ours and Python's, download each blob once.
//
// The token is sent to the endpoint's origin only: never to a storage host a redirect points
// at. With Settings::offline no request is made at all; answers come from refs/, trees/ and
// snapshots/, and a miss is kOfflineMiss naming what the cache does hold.
//
// Errors (every message names the repo, the revision and the file when there is one):
//   kInvalidArgument  malformed revision, variant or path
//   kNotFound         repo, revision, file or variant does not exist (the message says which)
//   kGated            the repo is gated and the token has no access
//   kUnauthorized     401/403 without a more specific code
//   kOfflineMiss      offline, and the cache does not have it
//   kIntegrityMismatch  bytes did not match their digest after every retry
//   kNetwork          connection, timeout or HTTP failure after every retry
//   kIo, kCorruptFile the local disk or cache is broken
//
// When the Hub cannot be reached (refused, no route, no such name) or accepts a request and sends
// nothing back within the timeout, the client gives up on it at once, without retrying, for the
// rest of its life (its copies included: they share what it learnt): a Hub that is down costs at
// most one timeout. What can be answered from the cache then is (a revision's commit from refs/,
// a listing from trees/ or snapshots/, a cached file), and each such answer is noted in
// fallbacks() for the caller to say. Where nothing is cached, the error says what was tried, for
// how long, and names HF_HUB_OFFLINE and the timeout settings. A Hub that answers with 5xx/429,
// or a transfer cut mid-way, is retried with backoff as before.
//
// Thread safety: every method may be called from several threads at once. Ownership: results
// are values; paths point into the cache and stay valid while the cache does.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kernelhub/base/internal/file_digests.hpp"
#include "kernelhub/base/internal/sha256.hpp"
#include "kernelhub/base/result.hpp"
#include "kernelhub/client/internal/cached_blob.hpp"
#include "kernelhub/client/internal/parsed_trees.hpp"
#include "kernelhub/client/internal/repo_tree.hpp"
#include "kernelhub/client/internal/settings.hpp"
#include "kernelhub/client/internal/transport.hpp"
#include "kernelhub/client/progress.hpp"
#include "kernelhub/client/repo_id.hpp"

namespace kernelhub::client {

class ClientState;  // what the client learns while it works (client_state.hpp)

// What a download call produced.
struct Snapshot {
  std::filesystem::path path;  // snapshots/<commit>/build/<variant> (or the file for download_file)
  std::filesystem::path root;  // snapshots/<commit>
  std::string commit;
  std::vector<std::string> files;      // repo paths, sorted
  std::uint64_t bytes = 0;             // total size of `files`
  std::uint64_t downloaded_bytes = 0;  // bytes fetched over the network by this call
  int requests = 0;                    // HTTP requests this call made (0: all from the cache)
  std::uint64_t resumed_bytes = 0;     // bytes of earlier partial downloads continued with Range
  std::vector<ChangedBlob> repaired;   // cached files that had changed, downloaded again
  double seconds = 0;                  // wall time of the call
  // The SHA-256 of each blob this call downloaded (by blob path, what the snapshot links to),
  // computed while it streamed in: a check that needs it has no reason to read the file again.
  std::map<std::filesystem::path, FileHash> downloaded_sha256;
};

// What a metadata HEAD says about a file (the headers huggingface_hub `get_hf_file_metadata` reads).
struct FileMetadata {
  std::string commit;  // X-Repo-Commit
  std::string etag;    // X-Linked-Etag or ETag, normalized: 40 or 64 hex
  std::uint64_t size = 0;
  std::string location;  // where to GET the bytes (the storage URL after a cross-host redirect)
  int requests = 0;
};

struct DownloadOptions {
  bool quiet = true;  // false: a progress line on stderr when it is a terminal
  // When set, the download's progress goes there instead (and `quiet` is not read).
  ProgressSink* progress = nullptr;
  // The revision the user asked for, when the call is given the commit resolve_revision()
  // turned it into: error messages then name both.
  std::string asked_revision;
  // The cache only, as if offline, for this call: a pinned commit whose files are all cached
  // is served without a request, and anything missing is kOfflineMiss.
  bool cache_only = false;
  // download_variant: these repo paths too, those the listing has (the variant's signature beside
  // its folder, signing/signature_file.hpp); a path it lacks is no error.
  std::vector<std::string> with_files;
  // Hash the files already in the cache and download again each whose content no longer matches
  // its blob's name (sha256 or git blob sha1): Snapshot::repaired lists them. Offline, a changed
  // file is kIntegrityMismatch. `digests`, when given, spares files whose hash it proves (a
  // verification stamp) and keeps what was hashed for the caller.
  bool verify_cached = false;
  FileDigests* digests = nullptr;
  // Download every file asked for again, cached or not (and no partial download is continued).
  bool force = false;
};

class HubClient {
 public:
  // REQUIRES: transport != nullptr (use make_curl_transport()). `trees`: where parsed listings are
  // kept, shared with other clients (a Session's); none: this client's own.
  HubClient(Settings settings, std::shared_ptr<Transport> transport, std::shared_ptr<ParsedTrees> trees = nullptr);
  // With the libcurl transport.
  explicit HubClient(Settings settings);

  const Settings& settings() const { return settings_; }

  // Every HTTP request this client and its copies have made so far.
  int requests() const;
  // Answers taken from the cache because the Hub could not be reached, one sentence each, in
  // order (said once each); a caller says them (the CLI on stderr and in --json). A layer above
  // adds its own with note_fallback (a publisher trusted when last asked).
  std::vector<std::string> fallbacks() const;
  void note_fallback(std::string note) const;

  // Network unless `revision` is a full commit (then nothing) or offline (refs/ only).
  // Resolves a branch, tag, v<N> version branch or short commit with the revision API and
  // records it in refs/<revision>. A network failure falls back to refs/<revision>.
  Result<std::string> resolve_revision(const RepoId& repo, RepoType type, std::string_view revision) const;

  // Network (refs API), or refs/ offline. The version branches "v1", "v2", … sorted by number.
  Result<std::vector<std::string>> list_versions(const RepoId& repo, RepoType type = RepoType::kKernel) const;

  // Network: GET /api/organizations/<org>/overview. Whether the Hub marks `org` as a trusted
  // kernel publisher (`trustedKernelPublisher`), as the kernels package checks before a load.
  // A user namespace or an unknown org is simply not trusted (false), not an error.
  // Errors: kOfflineMiss when offline, kNetwork.
  Result<bool> is_trusted_publisher(std::string_view org) const;

  // trees/<commit>.json if cached (disk), else the tree API, recursive and paginated (network),
  // then cached. Offline without a tree cache: rebuilt from snapshots/<commit>/. A commit's
  // listing never changes: once read, it is kept (by cache file, in the client's ParsedTrees), so
  // every later call for the commit, here and in download_*, parses nothing.
  // REQUIRES: is_commit_hash(commit).
  Result<RepoTree> tree(const RepoId& repo, RepoType type, std::string_view commit) const;

  // The build variants (folders under build/) at `commit`. REQUIRES: is_commit_hash(commit).
  Result<std::vector<std::string>> list_variants(const RepoId& repo, RepoType type, std::string_view commit) const;

  // HEAD /resolve with manual redirects: relative and same-origin ones are followed, a
  // cross-origin one stops and its X-Linked-Etag/X-Linked-Size/Location are read. Network.
  Result<FileMetadata> file_metadata(const RepoId& repo, RepoType type, std::string_view revision,
                                     std::string_view path) const;

  // One file (hf_hub_download): cache hit by commit without network, else HEAD + verified GET.
  // On EntryNotFound the .no_exist marker is written. Snapshot::path is the file.
  Result<Snapshot> download_file(const RepoId& repo, RepoType type, std::string_view revision, std::string_view path,
                                 const DownloadOptions& options = {}) const;

  // Every file under build/<variant>/ at `revision`, downloaded (missing ones only) and linked
  // into snapshots/<commit>/. A pinned commit whose files are all cached makes no request.
  Result<Snapshot> download_variant(const RepoId& repo, RepoType type, std::string_view revision,
                                    std::string_view variant, const DownloadOptions& options = {}) const;

  // Every file whose path starts with one of `prefixes` (all files when empty) at `revision`.
  Result<Snapshot> download_prefixes(const RepoId& repo, RepoType type, std::string_view revision,
                                     const std::vector<std::string>& prefixes,
                                     const DownloadOptions& options = {}) const;

 private:
  Settings settings_;
  std::shared_ptr<Transport> transport_;
  std::shared_ptr<ClientState> state_;
};

}  // namespace kernelhub::client
