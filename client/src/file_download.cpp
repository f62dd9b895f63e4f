#include "kernelhub/client/internal/hub_client.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <optional>

#include "blob_download.hpp"
#include "client_state.hpp"
#include "hub_call.hpp"
#include "hub_errors.hpp"
#include "hub_reads.hpp"
#include "kernelhub/base/internal/hub_names.hpp"
#include "kernelhub/base/internal/percent_encoding.hpp"
#include "kernelhub/client/internal/cache_layout.hpp"
#include "kernelhub/client/internal/cached_blob.hpp"
#include "kernelhub/client/progress.hpp"
#include "url.hpp"

// HubClient's downloads, as huggingface_hub keeps them in `file_download.py` and
// `_snapshot_download.py`: what to fetch for a file, a variant or a set of prefixes, what the
// cache already holds, and where the bytes go (blob_download.hpp fetches them). Each request is
// made by hub_call.hpp.

namespace kernelhub::client {

namespace fs = std::filesystem;

namespace {

// The download's progress: to the caller's sink, else a line on the terminal unless quiet.
ProgressReporter reporter_for(const DownloadOptions& options) {
  return options.progress != nullptr ? ProgressReporter(options.progress)
                                     : ProgressReporter::for_terminal(options.quiet);
}

bool path_exists(const fs::path& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;  // follows the snapshot symlink to its blob
}

}  // namespace

// ---- single files ------------------------------------------------------------------------

namespace {

Result<FileMetadata> request_file_metadata(HubCall& call, const RepoId& repo, RepoType type, std::string_view revision,
                                           std::string_view path) {
  What what{repo_label(repo, type), std::string(revision), std::string(path)};
  std::string target = call.settings.endpoint + "/" + std::string(url_prefix(type)) + repo.to_string() + "/resolve/" +
                       percent_encode(revision) + "/" + percent_encode_path(path);
  const std::string hub_origin = url::origin(call.settings.endpoint);
  for (int hop = 0; hop <= kMaxRedirects; ++hop) {
    Request request;
    request.method = "HEAD";
    request.url = target;
    request.headers = call.headers(target);
    request.headers.push_back({"Accept-Encoding", "identity"});
    StringSink sink;
    auto sent = call.send(std::move(request), sink, what);
    if (!sent) return unexpected(sent.error());
    const Response& response = *sent;
    const bool redirect = response.status >= 300 && response.status < 400;
    std::string location = target;
    if (redirect) {
      const std::string* next = response.header("location");
      if (!next) return unexpected(ErrorCode::kNetwork, "HTTP redirect without Location for " + what.describe());
      KH_ASSIGN_OR_RETURN(location, url::resolve(target, *next));
      const std::string next_origin = url::origin(location);
      if (next_origin == url::origin(target) || next_origin == hub_origin) {
        target = location;  // relative or same host (renamed repo, resolve-cache): follow
        continue;
      }
    }
    FileMetadata meta;
    meta.requests = call.requests;
    meta.location = location;
    if (const std::string* commit = response.header("x-repo-commit")) meta.commit = *commit;
    if (const std::string* etag = response.header("x-linked-etag")) {
      meta.etag = normalize_etag(*etag);
    } else if (const std::string* plain = response.header("etag")) {
      meta.etag = normalize_etag(*plain);
    }
    const std::string* size = response.header("x-linked-size");
    if (!size && !redirect) size = response.header("content-length");
    if (size) std::from_chars(size->data(), size->data() + size->size(), meta.size);
    if (meta.commit.empty() || meta.etag.empty() || !size) {
      return unexpected(ErrorCode::kCorruptFile, "the Hub's answer for " + what.describe() +
                                                     " lacks X-Repo-Commit, ETag or size: is `" +
                                                     call.settings.endpoint + "` a Hub?");
    }
    return meta;
  }
  return unexpected(ErrorCode::kNetwork, "too many redirects (" + std::to_string(kMaxRedirects) + ", a loop?) for " +
                                             what.describe() + ", last at `" + url::redact(target) + "`");
}

// An EntryNotFound answer at a known commit: remembered, as huggingface_hub does (.no_exist/).
void remember_entry_not_found(const CacheLayout& layout, const Response& answer, std::string_view revision,
                              std::string_view path) {
  const std::string* code = answer.header("x-error-code");
  const std::string* commit = answer.header("x-repo-commit");
  if (code && *code == "EntryNotFound" && commit && is_commit_hash(*commit)) {
    (void)layout.mark_missing(*commit, path);
    if (revision != *commit) (void)layout.write_ref(revision, *commit);
  }
}

}  // namespace

Result<FileMetadata> HubClient::file_metadata(const RepoId& repo, RepoType type, std::string_view revision,
                                              std::string_view path) const {
  KH_RETURN_IF_ERROR(hub_names::validate_repo_path(path));
  HubCall call{settings_, *transport_, *state_};
  return request_file_metadata(call, repo, type, revision, path);
}

Result<Snapshot> HubClient::download_file(const RepoId& repo, RepoType type, std::string_view revision,
                                          std::string_view path, const DownloadOptions& options) const {
  const auto started = settings_.clock->now();
  What what{repo_label(repo, type), std::string(revision), std::string(path)};
  if (auto safe = hub_names::validate_repo_path(path); !safe) {
    return unexpected(ErrorCode::kInvalidArgument, safe.error().message + " (in " + what.repo + ")");
  }
  const CacheLayout layout(settings_.cache_dir(type), type, repo);
  auto finish = [&](std::string commit, std::uint64_t size, std::uint64_t downloaded, int requests) {
    Snapshot s;
    s.root = layout.snapshot_dir(commit);
    s.path = layout.snapshot_path(commit, path);
    s.commit = std::move(commit);
    s.files = {std::string(path)};
    s.bytes = size;
    s.downloaded_bytes = downloaded;
    s.requests = requests;
    s.seconds = std::chrono::duration<double>(settings_.clock->now() - started).count();
    return s;
  };
  auto cached = [&](const std::string& commit) -> std::optional<Snapshot> {
    const fs::path file = layout.snapshot_path(commit, path);
    struct stat st {};
    if (::stat(file.c_str(), &st) != 0) return std::nullopt;
    return finish(commit, static_cast<std::uint64_t>(st.st_size), 0, 0);
  };
  if (is_commit_hash(revision)) {
    if (auto hit = cached(std::string(revision))) return *hit;
  }
  // The commit `revision` names in the cache: itself, or refs/<revision> (a corrupt ref is an error).
  const auto cached_commit = [&]() -> Result<std::optional<std::string>> {
    if (is_commit_hash(revision)) return std::optional(std::string(revision));
    return layout.read_ref(revision);
  };
  if (settings_.offline) {
    KH_ASSIGN_OR_RETURN(std::optional<std::string> commit, cached_commit());
    if (commit) {
      if (auto hit = cached(*commit)) return *hit;
    }
    return unexpected(offline_miss(layout, what.describe()));
  }
  HubCall call{settings_, *transport_, *state_};
  auto head = request_file_metadata(call, repo, type, revision, path);
  if (!head) {
    const Error& error = head.error();
    if (call.last_error_response) remember_entry_not_found(layout, *call.last_error_response, revision, path);
    if (error.code == ErrorCode::kNetwork) {  // unreachable: fall back to the cache
      KH_ASSIGN_OR_RETURN(std::optional<std::string> commit, cached_commit());
      if (commit) {
        if (auto hit = cached(*commit)) {
          call.state.fallback(fallback_note(error, "using the cached " + what.describe()));
          return *hit;
        }
      }
    }
    return unexpected(error);
  }
  const FileMetadata& meta = *head;
  if (revision != meta.commit) (void)layout.write_ref(revision, meta.commit);
  layout.ensure_cachedir_tag();
  if (auto hit = cached(meta.commit)) {
    Snapshot s = *hit;
    s.requests = call.requests;
    return s;
  }
  struct stat st {};
  std::uint64_t downloaded = 0;
  if (::stat(layout.blob_path(meta.etag).c_str(), &st) == 0 && static_cast<std::uint64_t>(st.st_size) == meta.size) {
    KH_RETURN_IF_ERROR(layout.link_snapshot(meta.commit, path, meta.etag));
  } else {
    // Fetch from the HEAD's final location; the token goes along only to the Hub's origin.
    ProgressReporter progress = reporter_for(options);
    progress.start(repo.to_string() + "/" + std::string(path), meta.size, 1);
    auto report = download_blobs(layout, meta.commit, {BlobJob{std::string(path), meta.etag, meta.size, meta.location}},
                                 settings_, *transport_, *state_, progress, what);
    progress.finish();
    if (!report) return unexpected(report.error());
    call.requests += report->requests;
    downloaded = report->bytes;
  }
  return finish(meta.commit, meta.size, downloaded, call.requests);
}

// ---- variants and prefixes ---------------------------------------------------------------

namespace {

// The files of `tree` a download asks for: those under `prefixes` (all files when empty), then
// the `with_files` the listing has, sorted by path. Errors: a file among them that cannot be
// stored safely (refused, not left out); nothing under `prefixes` (naming the variants the repo
// has when `variant` was asked for at `asked`, which is `commit`).
Result<std::vector<const TreeEntry*>> select_files(const RepoTree& tree, const std::vector<std::string>& prefixes,
                                                   std::string_view variant, const DownloadOptions& options,
                                                   const What& what, std::string_view asked,
                                                   const std::string& commit) {
  std::vector<const TreeEntry*> selected;
  if (prefixes.empty()) {
    for (const TreeEntry& e : tree.files) selected.push_back(&e);
  } else {
    for (const std::string& prefix : prefixes) {
      for (const TreeEntry* e : tree.under(prefix)) selected.push_back(e);
    }
  }
  const bool variant_found = !selected.empty();
  if (auto safe = tree.check_no_unsafe_path(prefixes, options.with_files); !safe) {
    return unexpected(safe.error().with_context(what.describe()));
  }
  for (const std::string& path : options.with_files) {
    for (const TreeEntry* e : tree.under(path)) {
      if (e->path == path) selected.push_back(e);
    }
  }
  std::sort(selected.begin(), selected.end(), [](const TreeEntry* a, const TreeEntry* b) { return a->path < b->path; });
  if (!variant_found) {
    if (!variant.empty()) {
      return unexpected(ErrorCode::kNotFound, "variant `" + std::string(variant) + "` not found in " + what.repo +
                                                  " at revision `" + std::string(asked) + "`" +
                                                  (asked != commit ? " (commit `" + commit + "`)" : "") + "; it has " +
                                                  quoted_list(tree.subfolders("build"), "no variants"));
    }
    return unexpected(ErrorCode::kNotFound, "no file under " + quoted_list(prefixes) + " in " + what.describe());
  }
  return selected;
}

// What a download must fetch: the files the cache lacks, and those whose cached content changed.
struct DownloadPlan {
  std::vector<BlobJob> jobs;
  std::vector<ChangedBlob> changed;  // cached files whose content no longer matches their blob's name
  std::uint64_t missing_bytes = 0;
};

// Links each selected file whose blob the cache holds into snapshots/<commit>/ (one stat per file
// on the warm path) and plans a job for every other one: all of them with `force`; with
// `verify_cached`, a cached file whose content changed too. Offline, a file not cached is
// kOfflineMiss and a changed one kIntegrityMismatch.
Result<DownloadPlan> plan_downloads(const CacheLayout& layout, const std::string& resolve_base,
                                    const std::string& commit, const std::vector<const TreeEntry*>& selected,
                                    const DownloadOptions& options, bool offline, const What& what) {
  DownloadPlan plan;
  for (const TreeEntry* e : selected) {
    BlobJob job{e->path, e->etag(), e->size, resolve_base + percent_encode_path(e->path)};
    const fs::path link = layout.snapshot_path(commit, e->path);
    const fs::path blob = layout.blob_path(e->etag());
    const bool linked = !options.force && path_exists(link);  // the warm path: one stat per file
    struct stat st {};
    const bool blob_cached = !options.force && !linked && ::stat(blob.c_str(), &st) == 0 &&
                             static_cast<std::uint64_t>(st.st_size) == e->size;
    if (linked || blob_cached) {
      if (options.verify_cached) {
        const fs::path file = linked ? link : blob;
        KH_ASSIGN_OR_RETURN(std::optional<std::string> found, blob_content_changed(file, e->etag(), options.digests));
        if (found) {
          What file_what = what;
          file_what.path = e->path;
          std::error_code ec;
          const fs::path on_disk = fs::canonical(file, ec);
          plan.changed.push_back(ChangedBlob{e->path, ec ? blob : on_disk, *found});
          if (offline) {
            return unexpected(ErrorCode::kIntegrityMismatch,
                              changed_in_cache(plan.changed.back(), file_what.describe()) +
                                  "; offline (HF_HUB_OFFLINE), it cannot be downloaded "
                                  "again: run the same command online");
          }
          job.replace = true;
          plan.jobs.push_back(std::move(job));
          plan.missing_bytes += e->size;
          continue;
        }
      }
      if (!linked) KH_RETURN_IF_ERROR(layout.link_snapshot(commit, e->path, e->etag()));
      continue;
    }
    if (offline) {
      What file = what;
      file.path = e->path;
      return unexpected(offline_miss(layout, file.describe()));
    }
    job.replace = options.force;
    job.fresh = options.force;
    plan.jobs.push_back(std::move(job));
    plan.missing_bytes += e->size;
  }
  return plan;
}

// Every file under `prefixes` at `revision` (download_variant names its variant, for the
// messages): the commit and its listing, the files asked for, what the cache lacks, then those
// fetched in parallel (blob_download.hpp), on one call whose settings are offline with cache_only.
Result<Snapshot> download_under_prefixes(const Settings& settings, Transport& transport, ClientState& state,
                                         const RepoId& repo, RepoType type, std::string_view revision,
                                         const std::vector<std::string>& prefixes, std::string_view variant,
                                         const DownloadOptions& options) {
  const auto started = settings.clock->now();
  Settings effective = settings;
  if (options.cache_only) effective.offline = true;
  HubCall call{effective, transport, state};
  KH_ASSIGN_OR_RETURN(std::string commit, resolve_commit(call, repo, type, revision));
  const CacheLayout layout(settings.cache_dir(type), type, repo);
  What what{repo_label(repo, type), std::string(revision), ""};
  std::string_view asked = revision;
  if (!options.asked_revision.empty() && options.asked_revision != revision) {
    asked = options.asked_revision;
    what.revision = options.asked_revision;
    what.commit = commit;
  }
  KH_ASSIGN_OR_RETURN(RepoTree tree, list_tree(call, repo, type, commit));
  KH_ASSIGN_OR_RETURN(std::vector<const TreeEntry*> selected,
                      select_files(tree, prefixes, variant, options, what, asked, commit));

  Snapshot snapshot;
  snapshot.commit = commit;
  snapshot.root = layout.snapshot_dir(commit);
  snapshot.path = variant.empty() ? snapshot.root : layout.snapshot_path(commit, "build/" + std::string(variant));
  for (const TreeEntry* e : selected) {
    snapshot.files.push_back(e->path);
    snapshot.bytes += e->size;
  }
  const std::string resolve_base =
      settings.endpoint + "/" + std::string(url_prefix(type)) + repo.to_string() + "/resolve/" + commit + "/";
  KH_ASSIGN_OR_RETURN(DownloadPlan plan,
                      plan_downloads(layout, resolve_base, commit, selected, options, effective.offline, what));
  if (!plan.jobs.empty()) {
    layout.ensure_cachedir_tag();
    ProgressReporter progress = reporter_for(options);
    progress.start(repo.to_string() + (variant.empty() ? "" : " " + std::string(variant)), plan.missing_bytes,
                   static_cast<int>(plan.jobs.size()));
    auto report = download_blobs(layout, commit, std::move(plan.jobs), settings, transport, call.state, progress, what);
    progress.finish();
    if (!report) {
      if (plan.changed.empty()) return unexpected(report.error());
      What file_what = what;
      file_what.path = plan.changed.front().path;
      return unexpected(report.error().with_context(changed_in_cache(plan.changed.front(), file_what.describe()) +
                                                    ", and downloading it again failed"));
    }
    call.requests += report->requests;
    snapshot.downloaded_bytes = report->bytes;
    snapshot.resumed_bytes = report->resumed_bytes;
    snapshot.downloaded_sha256 = std::move(report->sha256);
  }
  snapshot.repaired = std::move(plan.changed);
  snapshot.requests = call.requests;
  snapshot.seconds = std::chrono::duration<double>(settings.clock->now() - started).count();
  return snapshot;
}

}  // namespace

Result<Snapshot> HubClient::download_variant(const RepoId& repo, RepoType type, std::string_view revision,
                                             std::string_view variant, const DownloadOptions& options) const {
  if (variant.find('/') != std::string_view::npos || !hub_names::validate_repo_path(variant)) {
    return unexpected(ErrorCode::kInvalidArgument,
                      "`" + std::string(variant) + "` is not a variant name (e.g. torch-cpu)");
  }
  return download_under_prefixes(settings_, *transport_, *state_, repo, type, revision,
                                 {"build/" + std::string(variant) + "/"}, variant, options);
}

Result<Snapshot> HubClient::download_prefixes(const RepoId& repo, RepoType type, std::string_view revision,
                                              const std::vector<std::string>& prefixes,
                                              const DownloadOptions& options) const {
  return download_under_prefixes(settings_, *transport_, *state_, repo, type, revision, prefixes, "", options);
}

}  // namespace kernelhub::client
