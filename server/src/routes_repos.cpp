// Repo-level API routes beyond files: listing, move, auth-check, super-squash, LFS file listing
// and permanent deletion, and gated-repo access requests (what huggingface_hub's list_models,
// move_repo, auth_check, super_squash_history, list_lfs_files / permanently_delete_lfs_files and
// the *_access_request methods call, @2.4.0).
#include <algorithm>
#include <limits>
#include <set>

#include "digest_text.hpp"
#include "http_text.hpp"
#include "kernelhub/base/internal/percent_encoding.hpp"
#include "kernelhub/base/internal/sha1.hpp"
#include "request_json.hpp"
#include "server_impl.hpp"
#include "upload_requests.hpp"

namespace kernelhub::server {
namespace {

constexpr std::size_t kListPageSize = 1000;

}  // namespace

void Server::Impl::list_repos(Call& call, RepoType type) {
  const std::string author = call.query_value("author");
  const std::string search = ascii_lower(call.query_value("search"));
  const std::string sort = call.query_value("sort");
  std::size_t limit = std::numeric_limits<std::size_t>::max();
  if (const std::string l = call.query_value("limit"); !l.empty()) {
    const auto parsed = parse_u64(l);
    if (!parsed) return send_error(call.res, 400, "BadRequest", "invalid `limit`: " + l);
    limit = static_cast<std::size_t>(*parsed);
  }
  std::size_t cursor = 0;
  if (const std::string c = call.query_value("cursor"); !c.empty()) {
    const auto parsed = parse_u64(c);
    if (!parsed) return send_error(call.res, 400, "BadRequest", "invalid `cursor`: " + c);
    cursor = static_cast<std::size_t>(*parsed);
  }
  // Tags, pipelines, apps and the like are model-card data this server does not index: a filter
  // on them matches nothing rather than everything.
  const bool unindexed_filter = call.query.contains("filter") || call.query.contains("pipeline_tag") ||
                                call.query.contains("apps") || call.query.contains("library");
  std::vector<std::shared_ptr<const RepoState>> visible;
  for (auto& repo : store->repos(type)) {
    if (repo->meta.is_private && !AccessPolicy::owns(call.who, repo->key.ns)) continue;
    if (!author.empty() && ascii_lower(repo->key.ns) != ascii_lower(author)) continue;
    if (!search.empty() && ascii_lower(repo->key.id()).find(search) == std::string::npos) continue;
    if (unindexed_filter) continue;
    visible.push_back(std::move(repo));
  }
  const bool descending = call.query_value("direction") != "1";
  if (sort == "created_at" || sort == "createdAt" || sort == "last_modified" || sort == "lastModified") {
    const bool created = sort.starts_with("created");
    std::stable_sort(visible.begin(), visible.end(), [&](const auto& a, const auto& b) {
      const auto& x = created ? a->meta.created_at : a->last_modified;
      const auto& y = created ? b->meta.created_at : b->last_modified;
      return descending ? x > y : x < y;
    });
  }
  if (visible.size() > limit) visible.resize(limit);
  json out = json::array();
  const std::size_t end = std::min(visible.size(), cursor + kListPageSize);
  for (std::size_t i = cursor; i < end; ++i) {
    const RepoState& repo = *visible[i];
    const auto head = repo.branches.find("main");
    json item = {{"_id", sha1_hex(std::string(to_string(type)) + repo.key.id()).substr(0, 24)},
                 {"id", repo.key.id()},
                 {"author", repo.key.ns.empty() ? repo.key.name : repo.key.ns},
                 {"private", repo.meta.is_private},
                 {"gated", repo.meta.gated.empty() ? json(false) : json(repo.meta.gated)},
                 {"disabled", false},
                 {"createdAt", repo.meta.created_at},
                 {"lastModified", repo.last_modified},
                 {"downloads", 0},
                 {"likes", 0},
                 {"tags", json::array()}};
    if (head != repo.branches.end()) item["sha"] = head->second;
    if (type == RepoType::kModel) item["modelId"] = repo.key.id();
    out.push_back(std::move(item));
  }
  if (end < visible.size()) {
    std::string next = public_url + "/api/" + std::string(api_segment(type)) + "?cursor=" + std::to_string(end);
    for (const auto& [k, v] : call.query) {
      if (k != "cursor") next += "&" + percent_encode(k) + "=" + percent_encode(v);
    }
    call.res.set_header("Link", "<" + next + ">; rel=\"next\"");
  }
  send_json(call.res, 200, out);
}

void Server::Impl::move_repo(Call& call) {
  if (!call.who) return send_error(call.res, 401, "Unauthorized", "You must be authenticated to move a repo");
  const json body = parse_request_json(call.body);
  if (body.is_discarded() || !body.is_object() || !body.contains("fromRepo") || !body["fromRepo"].is_string() ||
      !body.contains("toRepo") || !body["toRepo"].is_string()) {
    return send_error(call.res, 400, "BadRequest", "expected {\"fromRepo\": id, \"toRepo\": id, \"type\": type}");
  }
  std::string type_name = body.contains("type") && body["type"].is_string() ? body["type"].get<std::string>() : "";
  const auto type = repo_type_from_name(type_name);
  if (!type) return send_error(call.res, 400, "BadRequest", "unknown repo type `" + type_name + "`");
  auto from = parse_repo_key(*type, body["fromRepo"].get<std::string>());
  auto to = parse_repo_key(*type, body["toRepo"].get<std::string>());
  if (!from) return send_error(call.res, 400, "BadRequest", from.error().message);
  if (!to) return send_error(call.res, 400, "BadRequest", to.error().message);
  const RepoKey source = canonical(std::move(*from));
  if (!writable_repo(call, source)) return;
  if (!call.who->write || !AccessPolicy::owns(call.who, to->ns)) {
    return send_error(call.res, 403, "Forbidden",
                      "You don't have the rights to create a repo under the namespace `" + to->ns + "`");
  }
  auto moved = store->move_repo(source, *to);
  if (!moved) return send_error(call.res, 500, "InternalError", moved.error().message);
  switch (*moved) {
    case Store::MoveOutcome::kMoved: break;
    case Store::MoveOutcome::kNotFound:
      return send_error(call.res, 404, "RepoNotFound", "Repository " + source.id() + " was deleted during the move");
    case Store::MoveOutcome::kExists:
      return send_error(call.res, 409, "RepoExists",
                        "A " + std::string(to_string(*type)) + " repository called " + to->id() + " already exists");
  }
  send_json(call.res, 200, {{"url", repo_url(*to)}});
}

void Server::Impl::auth_check(Call& call, const RepoKey& key, bool write) {
  auto repo = write ? writable_repo(call, key) : readable_repo(call, key);
  if (!repo) return;
  if (!write && !check_gate(call, *repo)) return;
  send_json(call.res, 200, {{"access", write ? "write" : "read"}});
}

void Server::Impl::super_squash(Call& call, const RepoKey& key, const std::string& branch) {
  auto repo = writable_repo(call, key);
  if (!repo) return;
  const json body = call.body.empty() ? json::object() : parse_request_json(call.body);
  if (body.is_discarded() || !body.is_object())
    return send_error(call.res, 400, "BadRequest", "expected a JSON object");
  std::string title = "Super-squash branch '" + branch + "'";
  if (body.contains("message") && body["message"].is_string() && !body["message"].get<std::string>().empty()) {
    title = body["message"].get<std::string>();
  }
  std::string name = branch.starts_with("refs/heads/") ? branch.substr(11) : branch;
  if (!repo->branches.contains(name)) {
    return send_error(call.res, 404, "RevisionNotFound", "Invalid rev id: " + branch);
  }
  auto outcome = store->squash_branch(key, name, title, call.who->user);
  if (!outcome) return send_error(call.res, 500, "InternalError", outcome.error().message);
  if (outcome->status != CommitOutcome::Status::kCommitted) {
    return send_error(call.res, 404, "RevisionNotFound", "Invalid rev id: " + branch);
  }
  send_json(call.res, 200, {{"commitId", outcome->commit_id}});
}

void Server::Impl::list_lfs_files(Call& call, const RepoKey& key) {
  auto repo = writable_repo(call, key);
  if (!repo) return;
  // One entry per LFS object, with a path and the ref it was found on (branches first, newest
  // commit first, so the `ref` is where the object is current).
  std::map<std::string, json> found;
  std::set<std::string> walked;
  auto walk = [&](const std::string& ref, const std::string& tip) -> Status {
    for (std::string id = tip; !id.empty() && walked.insert(id).second;) {
      KH_ASSIGN_OR_RETURN(auto commit, store->commit(key, id));
      for (const auto& [path, entry] : commit->files) {
        if (!entry.lfs || found.contains(entry.sha256)) continue;
        found[entry.sha256] = {{"fileOid", entry.sha256}, {"oid", entry.sha256}, {"filename", path},
                               {"size", entry.size},      {"ref", ref},          {"pushedAt", commit->date}};
      }
      id = commit->parent;
    }
    return {};
  };
  for (const auto& [name, target] : repo->branches) {
    if (auto walked_ok = walk(name.starts_with("refs/") ? name : "refs/heads/" + name, target); !walked_ok) {
      return send_error(call.res, 500, "InternalError", walked_ok.error().message);
    }
  }
  for (const auto& [name, target] : repo->tags) {
    if (auto walked_ok = walk("refs/tags/" + name, target); !walked_ok) {
      return send_error(call.res, 500, "InternalError", walked_ok.error().message);
    }
  }
  json out = json::array();
  for (auto& [oid, item] : found) out.push_back(std::move(item));
  send_json(call.res, 200, out);
}

void Server::Impl::repository_storage(Call& call, const std::string& org) {
  if (!call.who) return send_error(call.res, 401, "Unauthorized", "Invalid credentials in Authorization header");
  const std::string ns = org.empty() ? call.who->user : org;
  if (!org.empty() && !AccessPolicy::owns(call.who, org)) {
    return send_error(call.res, 403, "Forbidden",
                      "user `" + call.who->user + "` is not a member of organization `" + org + "`");
  }
  // Per repo: the distinct blobs of every commit its branches and tags reach, each counted once.
  json items = json::array();
  std::vector<std::pair<std::uint64_t, json>> rows;
  std::uint64_t total = 0;
  for (const RepoType type : kAllRepoTypes) {
    for (const auto& repo : store->repos(type)) {
      if (repo->key.ns != ns) continue;
      std::map<std::string, std::uint64_t> blobs;
      std::set<std::string> walked;
      std::vector<std::string> tips;
      for (const auto& [name, target] : repo->branches) tips.push_back(target);
      for (const auto& [name, target] : repo->tags) tips.push_back(target);
      for (const std::string& tip : tips) {
        for (std::string id = tip; !id.empty() && walked.insert(id).second;) {
          auto commit = store->commit(repo->key, id);
          if (!commit) return send_error(call.res, 500, "InternalError", commit.error().message);
          for (const auto& [path, entry] : (*commit)->files) blobs.emplace(entry.sha256, entry.size);
          id = (*commit)->parent;
        }
      }
      std::uint64_t storage = 0;
      for (const auto& [sha, size] : blobs) storage += size;
      total += storage;
      rows.emplace_back(storage, json{{"id", repo->key.id()},
                                      {"type", std::string(to_string(type))},
                                      {"updatedAt", repo->last_modified},
                                      {"visibility", repo->meta.is_private ? "private" : "public"},
                                      {"storage", storage}});
    }
  }
  for (auto& [storage, item] : rows) {
    item["storagePercent"] = total == 0 ? 0.0 : 100.0 * static_cast<double>(storage) / static_cast<double>(total);
    items.push_back(std::move(item));
  }
  send_json(call.res, 200, items);
}

void Server::Impl::delete_lfs_files(Call& call, const RepoKey& key) {
  auto repo = writable_repo(call, key);
  if (!repo) return;
  const json body = parse_request_json(call.body);
  const json* shas = nullptr;
  if (!body.is_discarded() && body.is_object() && body.contains("deletions") && body["deletions"].is_object() &&
      body["deletions"].contains("sha") && body["deletions"]["sha"].is_array()) {
    shas = &body["deletions"]["sha"];
  }
  if (shas == nullptr) {
    return send_error(call.res, 400, "BadRequest",
                      "expected {\"deletions\": {\"sha\": [...], \"rewriteHistory\": bool}}");
  }
  std::set<std::string> oids;
  for (const auto& sha : *shas) {
    if (!sha.is_string() || !is_sha256_hex(sha.get<std::string>())) {
      return send_error(call.res, 400, "BadRequest", "`deletions.sha` must hold sha256 object ids");
    }
    oids.insert(sha.get<std::string>());
  }
  // Without history rewriting the Hub keeps the pointers; this server has no other way to make an
  // object unreachable, so both forms rewrite (docs/SERVER.md, "Differences from the Hub").
  auto moved = store->remove_lfs_objects(key, oids);
  if (!moved) return send_error(call.res, 500, "InternalError", moved.error().message);
  send_json(call.res, 200, json::object());
}

void Server::Impl::list_access_requests(Call& call, const RepoKey& key, const std::string& status) {
  auto repo = writable_repo(call, key);
  if (!repo) return;
  if (status != "pending" && status != "accepted" && status != "rejected") {
    return send_error(call.res, 400, "BadRequest",
                      "status must be pending, accepted or rejected, not `" + status + "`");
  }
  json out = json::array();
  for (const auto& request : repo->meta.access_requests) {
    if (request.status != status) continue;
    json item = {{"user", {{"user", request.user}, {"fullname", request.user}}},
                 {"requestId", sha1_hex("access:" + key.id() + ":" + request.user).substr(0, 24)},
                 {"status", request.status},
                 {"timestamp", request.timestamp}};
    if (!request.rejection_reason.empty()) item["rejectionReason"] = request.rejection_reason;
    out.push_back(std::move(item));
  }
  send_json(call.res, 200, out);
}

void Server::Impl::handle_access_request(Call& call, const RepoKey& key, bool grant) {
  auto repo = writable_repo(call, key);
  if (!repo) return;
  if (repo->meta.gated.empty()) {
    return send_error(call.res, 400, "BadRequest", "Repository " + key.id() + " is not gated");
  }
  const json body = parse_request_json(call.body);
  if (body.is_discarded() || !body.is_object())
    return send_error(call.res, 400, "BadRequest", "expected a JSON object");
  std::string user;
  if (body.contains("user") && body["user"].is_string()) {
    user = body["user"].get<std::string>();
  } else if (body.contains("requestId") && body["requestId"].is_string()) {
    for (const auto& request : repo->meta.access_requests) {
      if (sha1_hex("access:" + key.id() + ":" + request.user).substr(0, 24) == body["requestId"].get<std::string>()) {
        user = request.user;
      }
    }
  }
  if (user.empty()) return send_error(call.res, 400, "BadRequest", "expected a `user` or a known `requestId`");
  if (!policy.knows_user(user)) return send_error(call.res, 404, "UserNotFound", "User " + user + " not found");
  const std::string status = grant ? "accepted" : body.value("status", "");
  if (status != "pending" && status != "accepted" && status != "rejected") {
    return send_error(call.res, 400, "BadRequest", "`status` must be pending, accepted or rejected");
  }
  const auto& requests = repo->meta.access_requests;
  auto it = std::find_if(requests.begin(), requests.end(), [&](const AccessRequest& r) { return r.user == user; });
  if (grant && it != requests.end() && it->status == "accepted") {
    return send_error(call.res, 400, "BadRequest", "User " + user + " already has access to " + key.id());
  }
  if (!grant && it == requests.end()) {
    return send_error(call.res, 404, "NotFound", "No access request from " + user + " for " + key.id());
  }
  if (!grant && it->status == status) {
    return send_error(call.res, 400, "BadRequest", "The access request of " + user + " is already " + status);
  }
  const AccessRequest next{user, status, iso8601_now(), status == "rejected" ? body.value("rejectionReason", "") : ""};
  auto updated = store->update_meta(key, [&](RepoMeta& meta) {
    auto mine = std::find_if(meta.access_requests.begin(), meta.access_requests.end(),
                             [&](const AccessRequest& r) { return r.user == user; });
    if (mine == meta.access_requests.end()) {
      meta.access_requests.push_back(next);
    } else {
      *mine = next;
    }
  });
  if (!updated) return send_error(call.res, 500, "InternalError", updated.error().message);
  send_json(call.res, 200, json::object());
}

}  // namespace kernelhub::server
