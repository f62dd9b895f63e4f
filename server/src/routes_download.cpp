// Download routes: /resolve (regular files served directly, LFS files redirected to the storage
// host) and the storage host's GET. Mirrors what huggingface_hub `file_download.py`
// `get_hf_file_metadata` / `_httpx_follow_relative_redirects` read.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>

#include "digest_text.hpp"
#include "http_text.hpp"
#include "kernelhub/base/internal/hub_names.hpp"
#include "kernelhub/base/internal/unique_fd.hpp"
#include "server_impl.hpp"

namespace kernelhub::server {
namespace {

constexpr std::size_t kReadChunk = 1 << 20;

// The file a streamed response reads from, opened on first use (a HEAD never opens it).
struct BlobReader {
  std::string path;
  UniqueFd fd;
  std::vector<char> buffer;
  std::uint64_t sent = 0;
  std::uint64_t cut_after = 0;  // 0 = never (fault injection)
};

// Returns false (and answers 416) when a single `Range: bytes=` cannot be satisfied; httplib
// itself turns a satisfiable range into a 206 with Content-Range.
bool range_satisfiable(const httplib::Request& req, std::uint64_t size) {
  if (!req.has_header("Range")) return true;
  const std::string range = req.get_header_value("Range");
  if (!range.starts_with("bytes=") || range.find(',') != std::string::npos) return true;
  const std::string spec = range.substr(6);
  const std::size_t dash = spec.find('-');
  if (dash == std::string::npos) return false;
  if (dash == 0) {  // suffix: last N bytes
    std::uint64_t n = 0;
    auto [p, ec] = std::from_chars(spec.data() + 1, spec.data() + spec.size(), n);
    return ec == std::errc() && n > 0 && size > 0;
  }
  std::uint64_t first = 0;
  auto [p, ec] = std::from_chars(spec.data(), spec.data() + dash, first);
  if (ec != std::errc()) return false;
  if (dash + 1 < spec.size()) {
    std::uint64_t last = 0;
    auto [p2, ec2] = std::from_chars(spec.data() + dash + 1, spec.data() + spec.size(), last);
    if (ec2 != std::errc() || last < first) return false;
  }
  return first < size;
}

}  // namespace

void Server::Impl::serve_blob(Call& call, const std::string& sha256, std::uint64_t size, bool allow_fault) {
  auto& res = call.res;
  res.set_header("Accept-Ranges", "bytes");
  if (!range_satisfiable(call.req, size)) {
    res.set_header("Content-Range", "bytes */" + std::to_string(size));
    send_error(
        res, 416, "RangeNotSatisfiable",
        "Range `" + call.req.get_header_value("Range") + "` is outside the file of " + std::to_string(size) + " bytes");
    return;
  }
  if (size == 0) {
    res.set_content("", "application/octet-stream");
    return;
  }
  auto reader = std::make_shared<BlobReader>();
  reader->path = store->blob_path(sha256).string();
  if (allow_fault && options.fault_cut_storage_after_bytes > 0 && call.req.method == "GET") {
    std::lock_guard lock(faults_mutex);
    if (faulted_blobs.insert(sha256).second) reader->cut_after = options.fault_cut_storage_after_bytes;
  }
  // No status set on purpose: httplib answers 200, or 206 with Content-Range for a Range request,
  // and calls us with the requested window only.
  res.set_content_provider(
      static_cast<std::size_t>(size), "application/octet-stream",
      [reader](std::size_t offset, std::size_t length, httplib::DataSink& sink) {
        if (!reader->fd) {
          reader->fd = UniqueFd(::open(reader->path.c_str(), O_RDONLY | O_CLOEXEC));
          if (!reader->fd) return false;
          reader->buffer.resize(kReadChunk);
        }
        std::size_t want = std::min(length, reader->buffer.size());
        if (reader->cut_after > 0) {
          if (reader->sent >= reader->cut_after) return false;  // drops the connection mid-body
          want = static_cast<std::size_t>(std::min<std::uint64_t>(want, reader->cut_after - reader->sent));
        }
        const ssize_t got = ::pread(reader->fd.get(), reader->buffer.data(), want, static_cast<off_t>(offset));
        if (got <= 0) return false;
        reader->sent += static_cast<std::uint64_t>(got);
        return sink.write(reader->buffer.data(), static_cast<std::size_t>(got));
      });
}

void Server::Impl::resolve_file(Call& call, const RepoKey& key, const std::string& revision, const std::string& path) {
  auto repo = readable_repo(call, key);
  if (!repo) return;
  if (!check_gate(call, *repo)) return;
  auto commit = commit_at(call, *repo, revision);
  if (!commit) return;
  auto& res = call.res;
  auto it = hub_names::validate_repo_path(path) ? commit->files.find(path) : commit->files.end();
  if (it == commit->files.end()) {
    // X-Repo-Commit lets huggingface_hub write its `.no_exist/<commit>/<path>` marker.
    send_error(res, 404, "EntryNotFound",
               "Entry not found: `" + (path.size() > 200 ? path.substr(0, 200) + "..." : path) +
                   "` does not exist in " + key.id() + " at revision " + revision,
               commit->id);
    return;
  }
  const FileEntry& entry = it->second;
  mark_cacheable(call, repo.get(), revision == commit->id);
  res.set_header("X-Repo-Commit", commit->id);
  res.set_header("ETag", "\"" + entry.git_sha1 + "\"");
  if (entry.lfs) {
    const std::string location = storage_url + "/lfs-storage/" + entry.sha256 + "?sig=" + sign("get:" + entry.sha256);
    res.status = 302;
    res.set_header("Location", location);
    res.set_header("X-Linked-Etag", "\"" + entry.sha256 + "\"");
    res.set_header("X-Linked-Size", std::to_string(entry.size));
    res.set_content("Found. Redirecting to " + location, "text/plain; charset=utf-8");
    return;
  }
  if (call.req.get_header_value("If-None-Match") == "\"" + entry.git_sha1 + "\"") {
    res.status = 304;
    return;
  }
  serve_blob(call, entry.sha256, entry.size, /*allow_fault=*/false);
}

void Server::Impl::storage_get(Call& call, const std::string& sha256) {
  if (!is_sha256_hex(sha256)) {
    return send_error(call.res, 400, "BadRequest", "`" + sha256 + "` is not a sha256 object id");
  }
  if (!check_signature(call, "get:" + sha256)) return;
  const auto size = store->blob_size(sha256);
  if (!size) return send_error(call.res, 404, "EntryNotFound", "no stored object " + sha256);
  call.res.set_header("ETag", "\"" + sha256 + "\"");
  mark_cacheable(call, nullptr, /*pinned=*/true);  // named by its content
  serve_blob(call, sha256, *size, /*allow_fault=*/true);
}

}  // namespace kernelhub::server
