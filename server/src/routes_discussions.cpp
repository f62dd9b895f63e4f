// Discussions and pull requests (/api/{T}s/{repo}/discussions): listing, opening, details, in
// the shapes huggingface_hub's get_repo_discussions, create_discussion / create_pull_request and
// get_discussion_details read (@2.4.0). A pull request is a branch `refs/pr/<num>` plus this
// record; commits with `create_pr=1` open one too (routes_upload.cpp). Comments, status changes
// and merges are the Hub's web UI and are not served.
#include <algorithm>

#include "digest_text.hpp"
#include "http_text.hpp"
#include "kernelhub/base/internal/sha1.hpp"
#include "request_json.hpp"
#include "server_impl.hpp"
#include "upload_requests.hpp"

namespace kernelhub::server {
namespace {

constexpr std::size_t kDiscussionsPerPage = 50;  // the Hub's page size

json discussion_json(const RepoKey& key, const Discussion& d) {
  return {{"num", d.num},
          {"title", d.title},
          {"status", d.status},
          {"createdAt", d.created_at},
          {"isPullRequest", d.is_pull_request},
          {"author", {{"name", d.author}, {"type", "user"}}},
          {"repo", {{"name", key.id()}, {"type", std::string(to_string(key.type))}}},
          {"pinned", false},
          {"numComments", 1}};
}

}  // namespace

void Server::Impl::list_discussions(Call& call, const RepoKey& key) {
  auto repo = readable_repo(call, key);
  if (!repo) return;
  const std::string type = call.query_value("type");
  const std::string status = call.query_value("status");
  const std::string author = call.query_value("author");
  std::size_t page = 0;
  if (const std::string p = call.query_value("p"); !p.empty()) {
    const auto parsed = parse_u64(p);
    if (!parsed || *parsed > 100000) return send_error(call.res, 400, "BadRequest", "invalid page `p`: " + p);
    page = static_cast<std::size_t>(*parsed);
  }
  std::vector<const Discussion*> matching;
  for (auto it = repo->meta.discussions.rbegin(); it != repo->meta.discussions.rend(); ++it) {  // newest first
    if (type == "discussion" && it->is_pull_request) continue;
    if (type == "pull_request" && !it->is_pull_request) continue;
    if (!status.empty() && status != "all" && it->status != status) continue;
    if (!author.empty() && it->author != author) continue;
    matching.push_back(&*it);
  }
  json out = json::array();
  const std::size_t start = page * kDiscussionsPerPage;
  for (std::size_t i = start; i < matching.size() && i < start + kDiscussionsPerPage; ++i) {
    out.push_back(discussion_json(key, *matching[i]));
  }
  const auto closed = std::count_if(repo->meta.discussions.begin(), repo->meta.discussions.end(),
                                    [](const Discussion& d) { return d.status == "closed"; });
  send_json(call.res, 200,
            {{"discussions", out}, {"count", matching.size()}, {"start", start}, {"numClosedDiscussions", closed}});
}

void Server::Impl::create_discussion(Call& call, const RepoKey& key) {
  const json body = parse_request_json(call.body);
  if (body.is_discarded() || !body.is_object() || !body.contains("title") || !body["title"].is_string()) {
    return send_error(call.res, 400, "BadRequest",
                      "expected {\"title\": text, \"description\": text, \"pullRequest\": bool}");
  }
  const bool pull_request = body.value("pullRequest", false) == true;
  auto repo = pull_request ? contributable_repo(call, key) : readable_repo(call, key);
  if (!repo) return;
  if (!call.who) return send_error(call.res, 401, "Unauthorized", "You must be authenticated to open a discussion");
  const std::string title = body["title"].get<std::string>();
  if (title.size() < 3 || title.size() > 200) {
    return send_error(call.res, 400, "BadRequest", "The title must be 3 to 200 characters long");
  }
  std::string base;
  if (pull_request) {
    auto main = repo->branches.find("main");
    if (main == repo->branches.end()) return send_error(call.res, 404, "RevisionNotFound", "Invalid rev id: main");
    base = main->second;
  }
  Discussion discussion;
  discussion.title = title;
  discussion.description = body.contains("description") && body["description"].is_string()
                               ? body["description"].get<std::string>()
                               : std::string();
  discussion.author = call.who->user;
  discussion.created_at = iso8601_now();
  discussion.status = pull_request ? "draft" : "open";  // the Hub opens API pull requests as drafts
  discussion.is_pull_request = pull_request;
  discussion.target_branch = "main";
  auto num = store->open_discussion(key, discussion, base);
  if (!num) return send_error(call.res, 500, "InternalError", num.error().message);
  if (*num == 0) return send_error(call.res, 404, "RepoNotFound", "Repository " + key.id() + " was deleted");
  discussion.num = *num;
  json out = discussion_json(key, discussion);
  if (pull_request) out["pullRequest"] = {{"ref", "refs/pr/" + std::to_string(*num)}};
  out["url"] = repo_url(key) + "/discussions/" + std::to_string(*num);
  send_json(call.res, 200, out);
}

void Server::Impl::discussion_details(Call& call, const RepoKey& key, const std::string& num_text) {
  auto repo = readable_repo(call, key);
  if (!repo) return;
  const auto num = parse_u64(num_text);
  auto it = std::find_if(repo->meta.discussions.begin(), repo->meta.discussions.end(),
                         [&](const Discussion& d) { return num && static_cast<std::uint64_t>(d.num) == *num; });
  if (it == repo->meta.discussions.end()) {
    return send_error(call.res, 404, "DiscussionNotFound", "Discussion " + num_text + " not found in " + key.id());
  }
  json out = discussion_json(key, *it);
  json comment = {{"id", sha1_hex(key.id() + "#" + num_text).substr(0, 24)},
                  {"type", "comment"},
                  {"createdAt", it->created_at},
                  {"author", {{"name", it->author}, {"type", "user"}}},
                  {"data", {{"edited", false}, {"hidden", false}, {"latest", {{"raw", it->description}}}}}};
  out["events"] = json::array({comment});
  if (it->is_pull_request) {
    json changes = {{"base", "refs/heads/" + it->target_branch}};
    out["changes"] = changes;
    out["filesWithConflicts"] = json::array();
    out["diff"] = "";
  }
  send_json(call.res, 200, out);
}

}  // namespace kernelhub::server
