// What a shared HTTP cache in front of the server (a cluster's site cache, docs/CLUSTER.md) may
// keep, and conditional answers for it to revalidate with.
//
// Note [Answers a shared cache may keep]
// Caches store what the origin marks (RFC 9111); nginx's proxy_cache honours Cache-Control over
// its own defaults. So every answer a loading client reads says how long it holds:
//  - an answer asked by full commit id (resolve, tree, revision) never changes, and a storage
//    object is named by its sha256: public, a year, immutable;
//  - an answer about a branch or tag (and refs, an organization's trust) moves with the next
//    publish: public for ServerOptions::ref_max_age_seconds, then revalidated by its ETag;
//  - an answer about a private or gated repo depends on who asks: private (never shared);
//  - an error is no-store (send_error): a 404 during a publish, a 429 or a 5xx must not
//    outlive the moment.
// No answer varies with a request header: the server never compresses, and what it answers about
// a public repo is the same for every caller, token or not. So no Vary, which would only split a
// cache's copies by each client's Accept-Encoding.
#include <string>
#include <string_view>

#include "kernelhub/base/internal/sha1.hpp"
#include "server_impl.hpp"

namespace kernelhub::server {
namespace {

constexpr std::string_view kImmutable = "public, max-age=31536000, immutable";

// `"a", W/"b"` holds `etag` (weak comparison, RFC 9110 13.1.2), or is `*`.
bool matches_if_none_match(std::string_view header, std::string_view etag) {
  if (etag.starts_with("W/")) etag.remove_prefix(2);
  while (!header.empty()) {
    const std::size_t comma = header.find(',');
    std::string_view one = header.substr(0, comma);
    while (!one.empty() && (one.front() == ' ' || one.front() == '\t')) one.remove_prefix(1);
    while (!one.empty() && (one.back() == ' ' || one.back() == '\t')) one.remove_suffix(1);
    if (one.starts_with("W/")) one.remove_prefix(2);
    if (one == "*" || one == etag) return true;
    if (comma == std::string_view::npos) break;
    header.remove_prefix(comma + 1);
  }
  return false;
}

}  // namespace

void Server::Impl::mark_cacheable(Call& call, const RepoState* repo, bool pinned) const {
  std::string value;
  if (repo != nullptr && (repo->meta.is_private || !repo->meta.gated.empty())) {
    value = "private";
  } else if (pinned) {
    value = kImmutable;
  } else {
    value = "public, max-age=" + std::to_string(options.ref_max_age_seconds);
  }
  call.res.set_header("Cache-Control", value);
}

void answer_conditionally(const httplib::Request& req, httplib::Response& res) {
  if (res.status != 200 || res.body.empty() || !res.has_header("Cache-Control")) return;
  if (!res.has_header("ETag")) res.set_header("ETag", "\"" + sha1_hex(res.body) + "\"");
  if ((req.method == "GET" || req.method == "HEAD") && req.has_header("If-None-Match") &&
      matches_if_none_match(req.get_header_value("If-None-Match"), res.get_header_value("ETag"))) {
    res.status = 304;
    res.body.clear();
  }
}

}  // namespace kernelhub::server
