#include "kernelhub/client/hub_client.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "blob_download.hpp"
#include "client_state.hpp"
#include "hub_answers.hpp"
#include "hub_errors.hpp"
#include "kernelhub/base/atomic_file.hpp"
#include "kernelhub/base/hub_names.hpp"
#include "kernelhub/base/percent_encoding.hpp"
#include "kernelhub/base/read_file.hpp"
#include "kernelhub/client/cache_layout.hpp"
#include "kernelhub/client/cached_blob.hpp"
#include "kernelhub/client/progress.hpp"
#include "url.hpp"

namespace kernelhub::client {

namespace fs = std::filesystem;

namespace {

// The download's progress: to the caller's sink, else a line on the terminal unless quiet.
ProgressReporter reporter_for(const DownloadOptions& options) {
  return options.progress != nullptr ? ProgressReporter(options.progress)
                                     : ProgressReporter::for_terminal(options.quiet);
}

using Clock = std::chrono::steady_clock;
constexpr int kMaxRedirects = 10;

std::string repo_label(const RepoId& repo, RepoType type) {
  return std::string(to_string(type)) + " repo `" + repo.to_string() + "`";
}

bool is_short_commit(std::string_view text) {
  return text.size() >= 5 && text.size() < 40 &&
         std::all_of(text.begin(), text.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::string join(const std::vector<std::string>& items, std::string_view none = "none") {
  if (items.empty()) return std::string(none);
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += ", ";
    out += "`" + item + "`";
  }
  return out;
}

bool path_exists(const fs::path& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;  // follows the snapshot symlink to its blob
}

// One public call's state: its Transport, what the client has learnt (ClientState), the request
// counter.
struct Call {
  const Settings& settings;
  Transport& transport;
  ClientState& state;
  int requests = 0;
  std::optional<Response> last_error_response;  // the last HTTP error answer, for its headers

  std::vector<Header> headers(const std::string& target) const {
    std::vector<Header> out{{"User-Agent", settings.user_agent()}};
    if (settings.token && url::origin(target) == url::origin(settings.endpoint)) {
      out.push_back({"Authorization", "Bearer " + settings.token->value()});
    }
    return out;
  }

  std::chrono::milliseconds backoff(int failures) const {
    auto delay = settings.backoff_base;
    for (int i = 1; i < failures && delay < settings.backoff_max; ++i) delay *= 2;
    return std::min(delay, settings.backoff_max);
  }

  // A request with retries on network errors and 408/429/5xx. 2xx/3xx come back as responses;
  // other statuses (or the last retriable one) become errors. A host that cannot be reached or
  // does not answer is not retried, and not asked again by this client (client_state.hpp).
  Result<Response> send(Request request, StringSink& sink, const What& what) {
    if (settings.offline) {
      return unexpected(ErrorCode::kOfflineMiss,
                        "offline mode (HF_HUB_OFFLINE) forbids the request for " + what.describe());
    }
    const std::string origin = url::origin(request.url);
    if (auto down = state.given_up(origin)) return unexpected(not_asked_again(*down, what.describe()));
    request.connect_timeout = settings.connect_timeout;
    request.read_timeout = settings.api_timeout;
    const auto started = Clock::now();
    for (int attempt = 1;; ++attempt) {
      ++requests;
      state.count_request();
      auto result = transport.perform(request, sink);
      std::optional<std::chrono::milliseconds> wait;
      std::string why;
      if (!result) {
        if (gives_up(result.error())) {
          Error error = unreachable(settings, request.url, what.describe(), result.error(), attempt, started);
          state.give_up(origin, error);
          return unexpected(std::move(error));
        }
        why = result.error().message;
      } else if (is_retriable_status(result->status)) {
        why = "HTTP " + std::to_string(result->status);
        wait = retry_after(*result);
        if (wait) wait = std::min(*wait, settings.retry_after_max);
      } else if (result->status >= 400) {
        last_error_response = *result;
        return unexpected(error_from_response(*result, sink.body(), what, request.url));
      } else {
        return result;
      }
      if (attempt > settings.max_retries) {
        if (result) return unexpected(error_from_response(*result, sink.body(), what, request.url));
        return unexpected(Error{ErrorCode::kNetwork,
                                "cannot reach the Hub for " + what.describe() + " after " + std::to_string(attempt) +
                                    " attempts over " + seconds_text(Clock::now() - started) + ": " + why + ". " +
                                    unreachable_advice(settings),
                                Missing::kUnspecified, result.error().network});
      }
      std::this_thread::sleep_for(wait ? *wait : backoff(attempt));
    }
  }

  // GET of an API answer. Redirects are followed (a renamed repo answers 307 on API routes too),
  // up to kMaxRedirects; headers() sends the token to the Hub's origin only, so a hop to another
  // host gets none.
  Result<std::string> get(const std::string& url, const What& what, Response* head = nullptr) {
    std::string target = url;
    for (int hop = 0; hop <= kMaxRedirects; ++hop) {
      Request request;
      request.url = target;
      request.headers = headers(target);
      request.headers.push_back({"Accept", "application/json"});
      StringSink sink;
      KH_ASSIGN_OR_RETURN(Response response, send(std::move(request), sink, what));
      if (response.status >= 300 && response.status < 400) {
        const std::string* location = response.header("location");
        if (!location) {
          return unexpected(ErrorCode::kNetwork, "HTTP " + std::to_string(response.status) +
                                                     " without a Location from `" + url::redact(target) + "` for " +
                                                     what.describe());
        }
        KH_ASSIGN_OR_RETURN(target, url::resolve(target, *location));
        continue;
      }
      if (response.status >= 300) {
        return unexpected(ErrorCode::kNetwork, "unexpected HTTP " + std::to_string(response.status) + " from `" +
                                                   url::redact(target) + "` for " + what.describe());
      }
      if (head) *head = response;
      return sink.take();
    }
    return unexpected(ErrorCode::kNetwork, "too many redirects (" + std::to_string(kMaxRedirects) + ", a loop?) for " +
                                               what.describe() + ", last at `" + url::redact(target) + "`");
  }
};

std::optional<std::string> next_link(const Response& response) {
  const std::string* link = response.header("link");
  if (!link) return std::nullopt;
  // <url>; rel="next", <url2>; rel="prev"
  std::size_t pos = 0;
  while (pos < link->size()) {
    const auto open = link->find('<', pos);
    if (open == std::string::npos) break;
    const auto close = link->find('>', open);
    if (close == std::string::npos) break;
    const auto end = link->find(',', close);
    const std::string params = link->substr(close + 1, end == std::string::npos ? std::string::npos : end - close - 1);
    if (params.find("rel=\"next\"") != std::string::npos || params.find("rel=next") != std::string::npos) {
      return link->substr(open + 1, close - open - 1);
    }
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  return std::nullopt;
}

// Rebuilds a tree from snapshots/<commit>/ (symlink targets name the blobs), for a cache that
// huggingface_hub filled file by file without writing trees/.
Result<RepoTree> tree_from_snapshot(const CacheLayout& layout, std::string_view commit) {
  const fs::path root = layout.snapshot_dir(commit);
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return unexpected(ErrorCode::kOfflineMiss, "no snapshot");
  RepoTree tree;
  tree.commit = std::string(commit);
  for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code entry_ec;
    const bool link = it->is_symlink(entry_ec);
    struct stat st {};
    if (::stat(it->path().c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;  // dangling or a folder
    TreeEntry entry;
    entry.path = it->path().lexically_relative(root).generic_string();
    const std::string etag = link ? fs::read_symlink(it->path(), entry_ec).filename().string() : "";
    entry.size = static_cast<std::uint64_t>(st.st_size);
    if (etag.size() == 64) {
      entry.lfs_sha256 = etag;
    } else {
      entry.blob_id = etag;
    }
    tree.files.push_back(std::move(entry));
  }
  std::sort(tree.files.begin(), tree.files.end(),
            [](const TreeEntry& a, const TreeEntry& b) { return a.path < b.path; });
  return tree;
}

std::string offline_inventory(const CacheLayout& layout) {
  const auto refs = layout.list_refs();
  const auto snapshots = layout.list_snapshots();
  if (refs.empty() && snapshots.empty()) {
    return "the cache at `" + layout.cache_root().string() + "` holds nothing for this repo";
  }
  return "the cache at `" + layout.cache_root().string() + "` holds refs " + join(refs) + " and snapshots " +
         join(snapshots);
}

Error offline_miss(const CacheLayout& layout, const std::string& what) {
  return Error{ErrorCode::kOfflineMiss, "offline mode (HF_HUB_OFFLINE) and " + what + " is not cached; " +
                                            offline_inventory(layout) +
                                            ". Download it once online, or unset HF_HUB_OFFLINE"};
}

// The note for an answer taken from the cache because `why` (a kNetwork error) kept the Hub from
// giving it: "<why, short>: <used>".
std::string fallback_note(const Error& why, const std::string& used) {
  const char* how = why.network == NetworkFailure::kUnreachable ? "could not be reached"
                    : why.network == NetworkFailure::kNoAnswer  ? "did not answer"
                                                                : "failed";
  return std::string("the Hub ") + how + "; " + used;
}

}  // namespace

HubClient::HubClient(Settings settings, std::shared_ptr<Transport> transport, std::shared_ptr<ParsedTrees> trees)
    : settings_(std::move(settings)),
      transport_(std::move(transport)),
      state_(std::make_shared<ClientState>(trees ? std::move(trees) : std::make_shared<ParsedTrees>())) {}

HubClient::HubClient(Settings settings) : HubClient(std::move(settings), make_curl_transport()) {}

int HubClient::requests() const {
  return state_->requests();
}
std::vector<std::string> HubClient::fallbacks() const {
  return state_->fallbacks();
}
void HubClient::note_fallback(std::string note) const {
  state_->fallback(std::move(note));
}

// ---- revisions ---------------------------------------------------------------------------

namespace {

Result<std::string> resolve_revision_impl(Call& call, const RepoId& repo, RepoType type, std::string_view revision) {
  const CacheLayout layout(call.settings.cache_dir(type), type, repo);
  What what{repo_label(repo, type), std::string(revision), ""};
  if (!hub_names::validate_revision(revision)) {
    return unexpected(ErrorCode::kInvalidArgument, "`" + std::string(revision) + "` is not a valid revision for " +
                                                       what.repo + " (expected a branch, tag, v<N> or commit)");
  }
  if (is_commit_hash(revision)) return std::string(revision);
  auto from_cache = [&]() -> Result<std::optional<std::string>> {
    KH_ASSIGN_OR_RETURN(std::optional<std::string> commit, layout.read_ref(revision));
    if (commit) return commit;
    if (is_short_commit(revision)) {
      std::optional<std::string> match;
      for (const auto& snapshot : layout.list_snapshots()) {
        if (!snapshot.starts_with(revision)) continue;
        if (match) return std::optional<std::string>();  // ambiguous
        match = snapshot;
      }
      return match;
    }
    return std::optional<std::string>();
  };
  if (call.settings.offline) {
    KH_ASSIGN_OR_RETURN(std::optional<std::string> commit, from_cache());
    if (commit) return *commit;
    return unexpected(offline_miss(layout, "revision `" + std::string(revision) + "` of " + what.repo));
  }
  const std::string target = call.settings.endpoint + "/api/" + std::string(api_segment(type)) + "/" +
                             repo.to_string() + "/revision/" + percent_encode(revision);
  auto body = call.get(target, what);
  if (!body) {
    // Like huggingface_hub: an unreachable Hub falls back to the cache; a clear "no" does not.
    if (body.error().code == ErrorCode::kNetwork) {
      KH_ASSIGN_OR_RETURN(std::optional<std::string> commit, from_cache());
      if (commit) {
        call.state.fallback(fallback_note(body.error(), "using the cached commit " + *commit + " for revision `" +
                                                            std::string(revision) + "` of " + what.repo));
        return *commit;
      }
      Error error = body.error();
      error.message += ". Nothing cached answers it either: " + offline_inventory(layout);
      return unexpected(std::move(error));
    }
    return unexpected(body.error());
  }
  auto commit = parse_revision_answer(*body);
  if (!commit) {
    return unexpected(
        commit.error().with_context("the Hub's answer for " + what.describe() + " (`" + url::redact(target) + "`)"));
  }
  if (revision != *commit) (void)layout.write_ref(revision, *commit);  // best effort: the cache may be read-only
  return std::move(*commit);
}

Result<RepoTree> tree_impl(Call& call, const RepoId& repo, RepoType type, std::string_view commit) {
  const CacheLayout layout(call.settings.cache_dir(type), type, repo);
  const auto file = layout.tree_path(commit);
  if (auto kept = call.state.trees().find(file)) return *kept;
  if (auto text = read_file(file)) {
    auto tree = RepoTree::from_cache_json(commit, *text);
    if (tree) {
      call.state.trees().keep(file, *tree);
      return tree;
    }
  }
  What what{repo_label(repo, type), std::string(commit), ""};
  if (call.settings.offline) {
    auto tree = tree_from_snapshot(layout, commit);
    if (tree) return tree;
    return unexpected(offline_miss(layout, "commit `" + std::string(commit) + "` of " + what.repo));
  }
  RepoTree tree;
  tree.commit = std::string(commit);
  std::string target = call.settings.endpoint + "/api/" + std::string(api_segment(type)) + "/" + repo.to_string() +
                       "/tree/" + percent_encode(commit) + "?recursive=true&expand=false";
  for (int page = 0; page < 100000; ++page) {
    Response head;
    auto got = call.get(target, what, &head);
    if (!got && got.error().code == ErrorCode::kNetwork) {
      // The snapshot a cache filled file by file (huggingface_hub writes no trees/) lists it too.
      if (auto cached = tree_from_snapshot(layout, commit)) {
        call.state.fallback(fallback_note(
            got.error(), "listing commit " + std::string(commit) + " of " + what.repo + " from its cached snapshot"));
        return cached;
      }
    }
    KH_ASSIGN_OR_RETURN(std::string body, std::move(got));
    auto files = parse_tree_page(body, &tree.unsafe);
    if (!files) return unexpected(files.error().with_context("the tree listing of " + what.describe()));
    std::move(files->begin(), files->end(), std::back_inserter(tree.files));
    auto next = next_link(head);
    if (!next) break;
    KH_ASSIGN_OR_RETURN(target, url::resolve(target, *next));
  }
  const auto by_path = [](const TreeEntry& a, const TreeEntry& b) { return a.path < b.path; };
  std::sort(tree.files.begin(), tree.files.end(), by_path);
  std::sort(tree.unsafe.begin(), tree.unsafe.end(), by_path);
  if (write_file_atomic(file, tree.to_cache_json())) call.state.trees().keep(file, tree);  // the cache: best effort
  return tree;
}

}  // namespace

Result<std::string> HubClient::resolve_revision(const RepoId& repo, RepoType type, std::string_view revision) const {
  Call call{settings_, *transport_, *state_};
  return resolve_revision_impl(call, repo, type, revision);
}

Result<std::vector<std::string>> HubClient::list_versions(const RepoId& repo, RepoType type) const {
  auto version_number = [](std::string_view name) -> std::optional<int> {
    if (name.size() < 2 || name[0] != 'v') return std::nullopt;
    int n = 0;
    auto [end, ec] = std::from_chars(name.data() + 1, name.data() + name.size(), n);
    if (ec != std::errc() || end != name.data() + name.size()) return std::nullopt;
    return n;
  };
  std::vector<std::pair<int, std::string>> versions;
  const CacheLayout layout(settings_.cache_dir(type), type, repo);
  auto from_refs = [&] {
    for (const auto& ref : layout.list_refs()) {
      if (auto n = version_number(ref)) versions.emplace_back(*n, ref);
    }
  };
  const std::string label = repo_label(repo, type);
  if (settings_.offline) {
    from_refs();
    if (versions.empty()) return unexpected(offline_miss(layout, "the version branches of " + label));
  } else {
    Call call{settings_, *transport_, *state_};
    What what{label, "", ""};
    const std::string target =
        settings_.endpoint + "/api/" + std::string(api_segment(type)) + "/" + repo.to_string() + "/refs";
    auto body = call.get(target, what);
    if (!body) {
      if (body.error().code != ErrorCode::kNetwork) return unexpected(body.error());
      from_refs();
      if (versions.empty()) return unexpected(body.error());
      state_->fallback(fallback_note(body.error(), "listing the cached version branches of " + label));
    } else {
      auto branches = parse_refs_answer(*body);
      if (!branches) return unexpected(branches.error().with_context("the refs of " + what.repo));
      for (const auto& branch : *branches) {
        if (auto n = version_number(branch.name)) {
          versions.emplace_back(*n, branch.name);
          if (!branch.commit.empty()) (void)layout.write_ref(branch.name, branch.commit);
        }
      }
    }
  }
  std::sort(versions.begin(), versions.end());
  std::vector<std::string> out;
  for (auto& [n, name] : versions) out.push_back(std::move(name));
  return out;
}

Result<bool> HubClient::is_trusted_publisher(std::string_view org) const {
  Call call{settings_, *transport_, *state_};
  What what{"organization `" + std::string(org) + "`", "", ""};
  auto body = call.get(settings_.endpoint + "/api/organizations/" + std::string(org) + "/overview", what);
  if (!body) {
    // Mirrors kernels hf_hub.py: a publisher whose overview does not exist is untrusted.
    if (body.error().code == ErrorCode::kNotFound) return false;
    return unexpected(body.error());
  }
  auto trusted = parse_overview_answer(*body);
  if (!trusted) return unexpected(trusted.error().with_context("the overview of " + what.repo));
  return *trusted;
}

Result<RepoTree> HubClient::tree(const RepoId& repo, RepoType type, std::string_view commit) const {
  Call call{settings_, *transport_, *state_};
  return tree_impl(call, repo, type, commit);
}

Result<std::vector<std::string>> HubClient::list_variants(const RepoId& repo, RepoType type,
                                                          std::string_view commit) const {
  KH_ASSIGN_OR_RETURN(RepoTree tree, this->tree(repo, type, commit));
  return tree.subfolders("build");
}

// ---- single files ------------------------------------------------------------------------

namespace {

Result<FileMetadata> head_impl(Call& call, const RepoId& repo, RepoType type, std::string_view revision,
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

}  // namespace

Result<FileMetadata> HubClient::file_metadata(const RepoId& repo, RepoType type, std::string_view revision,
                                              std::string_view path) const {
  KH_RETURN_IF_ERROR(hub_names::validate_repo_path(path));
  Call call{settings_, *transport_, *state_};
  return head_impl(call, repo, type, revision, path);
}

Result<Snapshot> HubClient::download_file(const RepoId& repo, RepoType type, std::string_view revision,
                                          std::string_view path, const DownloadOptions& options) const {
  const auto started = Clock::now();
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
    s.seconds = std::chrono::duration<double>(Clock::now() - started).count();
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
  Call call{settings_, *transport_, *state_};
  auto head = head_impl(call, repo, type, revision, path);
  if (!head) {
    const Error& error = head.error();
    if (call.last_error_response) {
      // EntryNotFound at a known commit: remember it, as huggingface_hub does (.no_exist/).
      const std::string* code = call.last_error_response->header("x-error-code");
      const std::string* commit = call.last_error_response->header("x-repo-commit");
      if (code && *code == "EntryNotFound" && commit && is_commit_hash(*commit)) {
        (void)layout.mark_missing(*commit, path);
        if (revision != *commit) (void)layout.write_ref(revision, *commit);
      }
    }
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

Result<Snapshot> download_prefixes_impl(const Settings& settings, Transport& transport, ClientState& state,
                                        const RepoId& repo, RepoType type, std::string_view revision,
                                        const std::vector<std::string>& prefixes, std::string_view variant,
                                        const DownloadOptions& options) {
  const auto started = Clock::now();
  Settings effective = settings;
  if (options.cache_only) effective.offline = true;
  Call call{effective, transport, state};
  KH_ASSIGN_OR_RETURN(std::string commit, resolve_revision_impl(call, repo, type, revision));
  const CacheLayout layout(settings.cache_dir(type), type, repo);
  What what{repo_label(repo, type), std::string(revision), ""};
  std::string_view asked = revision;
  if (!options.asked_revision.empty() && options.asked_revision != revision) {
    asked = options.asked_revision;
    what.revision = options.asked_revision;
    what.commit = commit;
  }
  KH_ASSIGN_OR_RETURN(RepoTree tree, tree_impl(call, repo, type, commit));

  std::vector<const TreeEntry*> selected;
  if (prefixes.empty()) {
    for (const TreeEntry& e : tree.files) selected.push_back(&e);
  } else {
    for (const std::string& prefix : prefixes) {
      for (const TreeEntry* e : tree.under(prefix)) selected.push_back(e);
    }
  }
  const bool variant_found = !selected.empty();
  // A file that cannot be stored safely among those asked for: refused, not left out.
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
                                                  join(tree.subfolders("build"), "no variants"));
    }
    return unexpected(ErrorCode::kNotFound, "no file under " + join(prefixes) + " in " + what.describe());
  }

  Snapshot snapshot;
  snapshot.commit = commit;
  snapshot.root = layout.snapshot_dir(commit);
  snapshot.path = variant.empty() ? snapshot.root : layout.snapshot_path(commit, "build/" + std::string(variant));
  std::vector<BlobJob> jobs;
  std::vector<ChangedBlob> changed;  // cached files whose content no longer matches their blob's name
  std::uint64_t missing_bytes = 0;
  const std::string resolve_base =
      settings.endpoint + "/" + std::string(url_prefix(type)) + repo.to_string() + "/resolve/" + commit + "/";
  for (const TreeEntry* e : selected) {
    snapshot.files.push_back(e->path);
    snapshot.bytes += e->size;
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
          changed.push_back(ChangedBlob{e->path, ec ? blob : on_disk, *found});
          if (effective.offline) {
            return unexpected(ErrorCode::kIntegrityMismatch, changed_in_cache(changed.back(), file_what.describe()) +
                                                                 "; offline (HF_HUB_OFFLINE), it cannot be downloaded "
                                                                 "again: run the same command online");
          }
          job.replace = true;
          jobs.push_back(std::move(job));
          missing_bytes += e->size;
          continue;
        }
      }
      if (!linked) KH_RETURN_IF_ERROR(layout.link_snapshot(commit, e->path, e->etag()));
      continue;
    }
    if (effective.offline) {
      What file = what;
      file.path = e->path;
      return unexpected(offline_miss(layout, file.describe()));
    }
    job.replace = options.force;
    job.fresh = options.force;
    jobs.push_back(std::move(job));
    missing_bytes += e->size;
  }
  if (!jobs.empty()) {
    layout.ensure_cachedir_tag();
    ProgressReporter progress = reporter_for(options);
    progress.start(repo.to_string() + (variant.empty() ? "" : " " + std::string(variant)), missing_bytes,
                   static_cast<int>(jobs.size()));
    auto report = download_blobs(layout, commit, std::move(jobs), settings, transport, call.state, progress, what);
    progress.finish();
    if (!report) {
      if (changed.empty()) return unexpected(report.error());
      What file_what = what;
      file_what.path = changed.front().path;
      return unexpected(report.error().with_context(changed_in_cache(changed.front(), file_what.describe()) +
                                                    ", and downloading it again failed"));
    }
    call.requests += report->requests;
    snapshot.downloaded_bytes = report->bytes;
    snapshot.resumed_bytes = report->resumed_bytes;
    snapshot.downloaded_sha256 = std::move(report->sha256);
  }
  snapshot.repaired = std::move(changed);
  snapshot.requests = call.requests;
  snapshot.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  return snapshot;
}

}  // namespace

Result<Snapshot> HubClient::download_variant(const RepoId& repo, RepoType type, std::string_view revision,
                                             std::string_view variant, const DownloadOptions& options) const {
  if (variant.find('/') != std::string_view::npos || !hub_names::validate_repo_path(variant)) {
    return unexpected(ErrorCode::kInvalidArgument,
                      "`" + std::string(variant) + "` is not a variant name (e.g. torch-cpu)");
  }
  return download_prefixes_impl(settings_, *transport_, *state_, repo, type, revision,
                                {"build/" + std::string(variant) + "/"}, variant, options);
}

Result<Snapshot> HubClient::download_prefixes(const RepoId& repo, RepoType type, std::string_view revision,
                                              const std::vector<std::string>& prefixes,
                                              const DownloadOptions& options) const {
  return download_prefixes_impl(settings_, *transport_, *state_, repo, type, revision, prefixes, "", options);
}

}  // namespace kernelhub::client
