// Read and admin API routes (docs/SERVER.md).
#include <algorithm>
#include <set>

#include "digest_text.hpp"
#include "http_text.hpp"
#include "kernelhub/base/internal/hub_names.hpp"
#include "kernelhub/base/internal/percent_encoding.hpp"
#include "kernelhub/base/internal/sha1.hpp"
#include "model_card.hpp"
#include "request_json.hpp"
#include "server_impl.hpp"

namespace kernelhub::server {
namespace {

// Not a git tree id, but stable: it changes exactly when something under the folder changes.
std::string directory_oid(const Commit& commit, const std::string& dir) {
  Sha1 h;
  const std::string prefix = dir + "/";
  for (auto it = commit.files.lower_bound(prefix); it != commit.files.end() && it->first.starts_with(prefix); ++it) {
    h.update(it->first);
    h.update(it->second.git_sha1);
  }
  return h.finish_hex();
}

json directory_json(const Commit& commit, const std::string& dir) {
  return {{"type", "directory"}, {"oid", directory_oid(commit, dir)}, {"size", 0}, {"path", dir}};
}

bool is_directory(const Commit& commit, const std::string& dir) {
  const std::string prefix = dir + "/";
  auto it = commit.files.lower_bound(prefix);
  return it != commit.files.end() && it->first.starts_with(prefix);
}

// The entries of a tree listing, in the order the Hub gives them: each folder right before its
// contents (recursive), or folders then files (one level).
std::vector<std::pair<std::string, bool>> list_entries(const Commit& commit, const std::string& folder,
                                                       bool recursive) {
  std::vector<std::pair<std::string, bool>> dirs, files;  // (path, is_dir)
  std::vector<std::pair<std::string, bool>> ordered;
  std::set<std::string> seen;
  const std::string prefix = folder.empty() ? "" : folder + "/";
  for (auto it = commit.files.lower_bound(prefix); it != commit.files.end() && it->first.starts_with(prefix); ++it) {
    const std::string rel = it->first.substr(prefix.size());
    if (recursive) {
      for (std::size_t slash = rel.find('/'); slash != std::string::npos; slash = rel.find('/', slash + 1)) {
        std::string dir = prefix + rel.substr(0, slash);
        if (seen.insert(dir).second) ordered.emplace_back(std::move(dir), true);
      }
      ordered.emplace_back(it->first, false);
    } else {
      const std::size_t slash = rel.find('/');
      if (slash == std::string::npos) {
        files.emplace_back(it->first, false);
      } else {
        std::string dir = prefix + rel.substr(0, slash);
        if (seen.insert(dir).second) dirs.emplace_back(std::move(dir), true);
      }
    }
  }
  if (recursive) return ordered;
  dirs.insert(dirs.end(), files.begin(), files.end());
  return dirs;
}

json commit_summary(const Commit& commit) {
  return {{"id", commit.id}, {"title", commit.title}, {"date", commit.date}};
}

// History walked at most this far back for `lastCommit` (the oldest commit seen is named then).
constexpr int kLastCommitDepth = 1000;

// The last commit at or before `head` that changed `path` (a file, or anything under a folder):
// what the Hub's `expand=True` tree and paths-info entries name as `lastCommit`.
json last_commit(const Store& store, const RepoKey& key, std::shared_ptr<const Commit> head, const std::string& path,
                 bool is_dir) {
  auto signature = [&](const Commit& c) -> std::string {
    if (!is_dir) {
      auto it = c.files.find(path);
      return it == c.files.end() ? std::string() : it->second.git_sha1;
    }
    return is_directory(c, path) ? directory_oid(c, path) : std::string();
  };
  const std::string wanted = signature(*head);
  for (int depth = 0; depth < kLastCommitDepth && !head->parent.empty(); ++depth) {
    auto parent = store.commit(key, head->parent);
    if (!parent || signature(**parent) != wanted) break;
    head = *parent;
  }
  return commit_summary(*head);
}

}  // namespace

void Server::Impl::repo_info(Call& call, const RepoKey& key, const std::string& revision) {
  auto repo = readable_repo(call, key);
  if (!repo) return;
  auto commit = commit_at(call, *repo, revision);
  if (!commit) return;
  std::uint64_t used = 0;
  for (const auto& [path, entry] : commit->files) used += entry.size;
  json info = {{"_id", sha1_hex(std::string(to_string(key.type)) + key.id()).substr(0, 24)},
               {"id", key.id()},
               {"author", key.ns.empty() ? key.name : key.ns},
               {"sha", commit->id},
               {"lastModified", commit->date},
               {"createdAt", repo->meta.created_at},
               {"private", repo->meta.is_private},
               {"gated", repo->meta.gated.empty() ? json(false) : json(repo->meta.gated)},
               {"disabled", false},
               {"downloads", 0},
               {"likes", 0},
               {"tags", json::array()},
               {"usedStorage", used}};
  if (key.type == RepoType::kModel) info["modelId"] = key.id();
  // Kernel repo info has no siblings on the Hub (clients list the tree instead).
  if (key.type != RepoType::kKernel) {
    const bool blobs = call.query_flag("blobs");
    json siblings = json::array();
    for (const auto& [path, entry] : commit->files) {
      json s = {{"rfilename", path}};
      if (blobs) {
        s["size"] = entry.size;
        s["blobId"] = entry.git_sha1;
        if (entry.lfs) {
          s["lfs"] = {{"size", entry.size},
                      {"sha256", entry.sha256},
                      {"pointerSize", lfs_pointer_text(entry.sha256, entry.size).size()}};
        }
      }
      siblings.push_back(std::move(s));
    }
    info["siblings"] = std::move(siblings);
  }
  mark_cacheable(call, repo.get(), revision == commit->id);
  send_json(call.res, 200, info);
}

void Server::Impl::tree(Call& call, const RepoKey& key, const std::string& revision, const std::string& raw_path) {
  auto repo = readable_repo(call, key);
  if (!repo) return;
  auto commit = commit_at(call, *repo, revision);
  if (!commit) return;
  std::string folder;
  if (!raw_path.empty()) {
    auto normalized = hub_names::normalize_folder_path(raw_path);
    if (!normalized) return send_error(call.res, 400, "BadRequest", normalized.error().message);
    folder = *normalized;
    if (!is_directory(*commit, folder)) {
      return send_error(call.res, 404, "EntryNotFound",
                        "Entry not found: folder `" + folder + "` does not exist in " + key.id() + " at " + revision,
                        commit->id);
    }
  }
  const bool recursive = call.query_flag("recursive");
  const bool expand = call.query_flag("expand");
  std::size_t cursor = 0;
  if (const std::string c = call.query_value("cursor"); !c.empty()) {
    char* end = nullptr;
    cursor = std::strtoull(c.c_str(), &end, 10);
    if (end == c.c_str() || *end != '\0') return send_error(call.res, 400, "BadRequest", "invalid `cursor`: " + c);
  }
  const auto entries = list_entries(*commit, folder, recursive);
  const std::size_t page = expand ? std::min<std::size_t>(options.tree_page_size, 50) : options.tree_page_size;
  json out = json::array();
  for (std::size_t i = cursor; i < entries.size() && i < cursor + page; ++i) {
    const auto& [path, is_dir] = entries[i];
    json e = is_dir ? directory_json(*commit, path) : file_entry_json(path, commit->files.at(path));
    if (expand) e["lastCommit"] = last_commit(*store, key, commit, path, is_dir);
    out.push_back(std::move(e));
  }
  if (cursor + page < entries.size()) {
    // Later pages are pinned to the commit, so a push between pages cannot mix two trees.
    std::string next = api_base(key) + "/tree/" + commit->id;
    if (!folder.empty()) next += "/" + percent_encode(folder);
    next += "?recursive=" + std::string(recursive ? "true" : "false") + "&expand=" + (expand ? "true" : "false") +
            "&cursor=" + std::to_string(cursor + page);
    call.res.set_header("Link", "<" + next + ">; rel=\"next\"");
  }
  mark_cacheable(call, repo.get(), revision == commit->id);
  send_json(call.res, 200, out);
}

void Server::Impl::paths_info(Call& call, const RepoKey& key, const std::string& revision) {
  auto repo = readable_repo(call, key);
  if (!repo) return;
  auto commit = commit_at(call, *repo, revision);
  if (!commit) return;
  std::vector<std::string> paths;
  bool expand = false;
  const std::string content_type = call.req.get_header_value("Content-Type");
  if (content_type.starts_with("application/json")) {
    const json body = parse_request_json(call.body);
    if (body.is_discarded() || !body.is_object() || !body.contains("paths") || !body["paths"].is_array()) {
      return send_error(call.res, 400, "BadRequest", "expected a JSON body {\"paths\": [...], \"expand\": bool}");
    }
    for (const auto& p : body["paths"]) {
      if (!p.is_string()) return send_error(call.res, 400, "BadRequest", "`paths` must hold strings");
      paths.push_back(p.get<std::string>());
    }
    expand = body.value("expand", false);
  } else {
    auto form = parse_form(call.body);
    if (!form) return send_error(call.res, 400, "BadRequest", "malformed form body; expected paths=a&paths=b");
    for (auto [it, end] = form->equal_range("paths"); it != end; ++it) paths.push_back(it->second);
    auto e = form->find("expand");
    expand = e != form->end() && (e->second == "true" || e->second == "1" || e->second == "True");
  }
  if (paths.size() > 1000) {
    return send_error(call.res, 413, "PayloadTooLarge", "too many parameters: at most 1000 paths per request");
  }
  json out = json::array();
  for (const std::string& raw : paths) {
    auto path = hub_names::normalize_folder_path(raw);
    if (!path) return send_error(call.res, 400, "BadRequest", path.error().message);
    json e;
    bool is_dir = false;
    if (auto it = commit->files.find(*path); it != commit->files.end()) {
      e = file_entry_json(*path, it->second);
    } else if (is_directory(*commit, *path)) {
      e = directory_json(*commit, *path);
      is_dir = true;
    } else {
      continue;  // the Hub omits paths that do not exist
    }
    if (expand) e["lastCommit"] = last_commit(*store, key, commit, *path, is_dir);
    out.push_back(std::move(e));
  }
  send_json(call.res, 200, out);
}

void Server::Impl::refs(Call& call, const RepoKey& key) {
  auto repo = readable_repo(call, key);
  if (!repo) return;
  json branches = json::array(), tags = json::array(), prs = json::array();
  for (const auto& [name, target] : repo->branches) {
    if (name.starts_with("refs/pr/")) {
      prs.push_back({{"name", name.substr(8)}, {"ref", name}, {"targetCommit", target}});
    } else {
      branches.push_back({{"name", name}, {"ref", "refs/heads/" + name}, {"targetCommit", target}});
    }
  }
  for (const auto& [name, target] : repo->tags) {
    tags.push_back({{"name", name}, {"ref", "refs/tags/" + name}, {"targetCommit", target}});
  }
  json out = {{"branches", branches}, {"tags", tags}, {"converts", json::array()}};
  if (call.query_flag("include_prs")) out["pullRequests"] = prs;
  mark_cacheable(call, repo.get(), /*pinned=*/false);
  send_json(call.res, 200, out);
}

void Server::Impl::commits(Call& call, const RepoKey& key, const std::string& revision) {
  auto repo = readable_repo(call, key);
  if (!repo) return;
  if (!check_gate(call, *repo)) return;
  auto commit = commit_at(call, *repo, revision);
  if (!commit) return;
  // expand[]=formatted asks for the title and message as HTML; the Hub renders Markdown there,
  // this server escapes the text (docs/SERVER.md).
  bool formatted = false;
  for (auto [it, end] = call.query.equal_range("expand[]"); it != end; ++it) formatted |= it->second == "formatted";
  for (auto [it, end] = call.query.equal_range("expand"); it != end; ++it) formatted |= it->second == "formatted";
  json out = json::array();
  while (commit) {
    json authors = json::array();
    for (const auto& user : commit->authors) authors.push_back({{"user", user}});
    json item = {{"id", commit->id},
                 {"title", commit->title},
                 {"message", commit->message},
                 {"date", commit->date},
                 {"authors", authors}};
    if (formatted) {
      item["formatted"] = {{"title", html_escape(commit->title)},
                           {"message", commit->message.empty() ? "" : "<p>" + html_escape(commit->message) + "</p>"}};
    }
    out.push_back(std::move(item));
    if (commit->parent.empty()) break;
    auto parent = store->commit(key, commit->parent);
    if (!parent) return send_error(call.res, 500, "InternalError", parent.error().message);
    commit = *parent;
  }
  send_json(call.res, 200, out);
}

void Server::Impl::whoami(Call& call) {
  if (!call.who) return send_error(call.res, 401, "Unauthorized", "Invalid credentials in Authorization header");
  json orgs = json::array();
  for (const auto& org : call.who->orgs) {
    const auto info = policy.organization(org);
    orgs.push_back({{"type", "org"},
                    {"name", org},
                    {"fullname", info ? info->fullname : org},
                    {"roleInOrg", call.who->write ? "write" : "read"}});
  }
  send_json(
      call.res, 200,
      {{"type", "user"},
       {"id", sha1_hex("user:" + call.who->user).substr(0, 24)},
       {"name", call.who->user},
       {"fullname", call.who->fullname},
       {"email", nullptr},
       {"emailVerified", false},
       {"isPro", false},
       {"canPay", false},
       {"avatarUrl", ""},
       {"orgs", orgs},
       {"auth",
        {{"type", "access_token"},
         {"accessToken", {{"displayName", "kernelhub serve token"}, {"role", call.who->write ? "write" : "read"}}}}}});
}

void Server::Impl::organization_overview(Call& call, const std::string& org) {
  const auto info = policy.organization(org);
  if (!info) {
    return send_error(call.res, 404, "OrganizationNotFound", "Organization `" + org + "` not found on this server");
  }
  mark_cacheable(call, nullptr, /*pinned=*/false);
  send_json(call.res, 200,
            {{"_id", sha1_hex("org:" + org).substr(0, 24)},
             {"name", info->name},
             {"fullname", info->fullname},
             {"avatarUrl", ""},
             {"type", "org"},
             {"isVerified", info->trusted_kernel_publisher},
             {"isFollowing", false},
             {"numUsers", 0},
             {"numModels", 0},
             {"numSpaces", 0},
             {"numDatasets", 0},
             {"numFollowers", 0},
             {"trustedKernelPublisher", info->trusted_kernel_publisher}});
}

// The registry of AI agent harnesses huggingface_hub (2.4+) asks for once a day, to name the agent
// that runs it in its user agent. This server keeps no telemetry: a registry that names none, so
// detection reports no agent, as huggingface_hub does when the Hub cannot be reached.
void Server::Impl::agent_harnesses(Call& call) {
  mark_cacheable(call, nullptr, /*pinned=*/false);
  send_json(call.res, 200, {{"standardEnvVars", json::array()}, {"harnesses", json::object()}});
}

// huggingface_hub validates README.md front matter before committing it (model_card.hpp).
// Errors answer 400; with `Accept: text/plain` (RepoCard.validate) as "- Error: ..." lines.
void Server::Impl::validate_yaml(Call& call) {
  const json body = parse_request_json(call.body);
  if (body.is_discarded() || !body.is_object() || !body.contains("content") || !body["content"].is_string()) {
    return send_error(call.res, 400, "BadRequest", "expected {\"content\": <README text>, \"repoType\": <type>}");
  }
  const CardCheck check = check_model_card(body["content"].get<std::string>());
  const int status = check.errors.empty() ? 200 : 400;
  if (call.req.get_header_value("Accept").starts_with("text/plain")) {
    std::string text;
    for (const auto& e : check.errors) text += "- Error: " + e + "\n";
    for (const auto& w : check.warnings) text += "- Warning: " + w + "\n";
    call.res.status = status;
    if (status != 200) call.res.set_header("X-Error-Message", "Invalid metadata in README.md");
    call.res.set_content(text, "text/plain; charset=utf-8");
    return;
  }
  json errors = json::array(), warnings = json::array();
  for (const auto& e : check.errors) errors.push_back({{"message", e}});
  for (const auto& w : check.warnings) warnings.push_back({{"message", w}});
  json out = {{"errors", errors}, {"warnings", warnings}};
  if (status != 200) {
    call.res.set_header("X-Error-Message", "Invalid metadata in README.md");
    out["error"] = "Invalid metadata in README.md: " + check.errors.front();
  }
  send_json(call.res, status, out);
}

namespace {
// The repo named by a create/delete body: {"name", "organization", "type"}.
Result<RepoKey> key_from_body(const json& body, const TokenInfo* who) {
  if (!body.is_object() || !body.contains("name") || !body["name"].is_string()) {
    return unexpected(ErrorCode::kInvalidArgument, "expected a JSON body with a string `name`");
  }
  std::string type_name;
  if (body.contains("type") && !body["type"].is_null()) {
    if (!body["type"].is_string()) return unexpected(ErrorCode::kInvalidArgument, "`type` must be a string");
    type_name = body["type"].get<std::string>();
  }
  const auto type = repo_type_from_name(type_name);
  if (!type) {
    return unexpected(ErrorCode::kInvalidArgument,
                      "unknown repo type `" + type_name + "`; use model, dataset, space or kernel");
  }
  std::string name = body["name"].get<std::string>();
  std::string ns;
  if (body.contains("organization") && body["organization"].is_string()) ns = body["organization"].get<std::string>();
  if (const auto slash = name.find('/'); slash != std::string::npos && ns.empty()) {
    ns = name.substr(0, slash);
    name = name.substr(slash + 1);
  }
  if (ns.empty() && who) ns = who->user;
  return parse_repo_key(*type, ns.empty() ? name : ns + "/" + name);
}
}  // namespace

void Server::Impl::create_repo(Call& call) {
  if (!call.who) return send_error(call.res, 401, "Unauthorized", "You must be authenticated to create a repo");
  const json body = parse_request_json(call.body);
  if (body.is_discarded()) return send_error(call.res, 400, "BadRequest", "request body is not valid JSON");
  auto key = key_from_body(body, call.who);
  if (!key) return send_error(call.res, 400, "BadRequest", key.error().message);
  if (!call.who->write || !AccessPolicy::owns(call.who, key->ns)) {
    return send_error(call.res, 403, "Forbidden",
                      "You don't have the rights to create a repo under the namespace `" + key->ns + "`");
  }
  RepoMeta meta;
  const auto org = policy.organization(key->ns);
  meta.is_private = body.contains("private") && body["private"].is_boolean() ? body["private"].get<bool>()
                                                                             : org && org->private_repos_by_default;
  if (body.contains("visibility") && body["visibility"].is_string()) {
    meta.is_private = body["visibility"].get<std::string>() != "public";
  }
  auto created = store->create_repo(*key, meta, call.who->user);
  if (!created) return send_error(call.res, 500, "InternalError", created.error().message);
  const std::string url = repo_url(*key);
  if (!*created) {
    // huggingface_hub's create_repo(exist_ok=True) reads `url` from this 409 body.
    call.res.status = 409;
    call.res.set_header("X-Error-Code", "RepoExists");
    call.res.set_header("X-Error-Message", "You already created this " + std::string(to_string(key->type)) + " repo");
    call.res.set_content(
        dump_json({{"error", "You already created this " + std::string(to_string(key->type)) + " repo"}, {"url", url}}),
        "application/json; charset=utf-8");
    return;
  }
  send_json(call.res, 200, {{"url", url}, {"name", key->id()}, {"id", key->id()}});
}

void Server::Impl::delete_repo(Call& call) {
  if (!call.who) return send_error(call.res, 401, "Unauthorized", "You must be authenticated to delete a repo");
  const json body = parse_request_json(call.body);
  if (body.is_discarded()) return send_error(call.res, 400, "BadRequest", "request body is not valid JSON");
  auto key = key_from_body(body, call.who);
  if (!key) return send_error(call.res, 400, "BadRequest", key.error().message);
  if (!writable_repo(call, *key)) return;
  auto deleted = store->delete_repo(*key);
  if (!deleted) return send_error(call.res, 500, "InternalError", deleted.error().message);
  send_json(call.res, 200, json::object());
}

void Server::Impl::update_settings(Call& call, const RepoKey& key) {
  auto repo = writable_repo(call, key);
  if (!repo) return;
  const json body = parse_request_json(call.body);
  if (body.is_discarded() || !body.is_object())
    return send_error(call.res, 400, "BadRequest", "expected a JSON object");
  RepoMeta meta = repo->meta;  // the fields below, checked here, set under the store's lock
  if (body.contains("private")) {
    if (!body["private"].is_boolean()) return send_error(call.res, 400, "BadRequest", "`private` must be true/false");
    meta.is_private = body["private"].get<bool>();
  }
  if (body.contains("visibility") && body["visibility"].is_string()) {
    meta.is_private = body["visibility"].get<std::string>() != "public";
  }
  if (body.contains("gated")) {
    const auto& g = body["gated"];
    if (g.is_boolean() && !g.get<bool>()) {
      meta.gated.clear();
    } else if (g.is_string() && (g.get<std::string>() == "auto" || g.get<std::string>() == "manual")) {
      meta.gated = g.get<std::string>();
    } else {
      return send_error(call.res, 400, "BadRequest", "`gated` must be false, \"auto\" or \"manual\"");
    }
  }
  if (body.contains("gatedAccess")) {  // kernelhub extension: users granted access to a gated repo
    if (!body["gatedAccess"].is_array()) return send_error(call.res, 400, "BadRequest", "`gatedAccess` must be a list");
    meta.gated_access.clear();
    for (const auto& u : body["gatedAccess"]) {
      if (!u.is_string()) return send_error(call.res, 400, "BadRequest", "`gatedAccess` must hold user names");
      meta.gated_access.push_back(u.get<std::string>());
    }
  }
  auto updated = store->update_meta(key, [&](RepoMeta& current) {
    current.is_private = meta.is_private;
    current.gated = meta.gated;
    current.gated_access = meta.gated_access;
  });
  if (!updated) return send_error(call.res, 500, "InternalError", updated.error().message);
  send_json(call.res, 200, json::object());
}

void Server::Impl::create_branch(Call& call, const RepoKey& key, const std::string& branch) {
  auto repo = writable_repo(call, key);
  if (!repo) return;
  if (auto valid = hub_names::validate_ref_name(branch); !valid)
    return send_error(call.res, 400, "BadRequest", valid.error().message);
  std::string start = "main";
  if (!call.body.empty()) {
    const json body = parse_request_json(call.body);
    if (body.is_discarded() || !body.is_object())
      return send_error(call.res, 400, "BadRequest", "expected a JSON object");
    if (body.contains("startingPoint") && body["startingPoint"].is_string())
      start = body["startingPoint"].get<std::string>();
  }
  auto commit = commit_at(call, *repo, start);
  if (!commit) return;
  auto changed = store->set_ref(key, Store::RefKind::kBranch, branch, commit->id, /*must_not_exist=*/true);
  if (!changed) return send_error(call.res, 500, "InternalError", changed.error().message);
  if (*changed == Store::RefChange::kExists) {
    return send_error(call.res, 409, "RefExists", "Reference refs/heads/" + branch + " already exists");
  }
  send_json(call.res, 200, json::object());
}

void Server::Impl::create_tag(Call& call, const RepoKey& key, const std::string& revision) {
  auto repo = writable_repo(call, key);
  if (!repo) return;
  const json body = parse_request_json(call.body);
  if (body.is_discarded() || !body.is_object() || !body.contains("tag") || !body["tag"].is_string()) {
    return send_error(call.res, 400, "BadRequest", "expected a JSON body {\"tag\": name, \"message\"?: text}");
  }
  const std::string tag = body["tag"].get<std::string>();
  // The revision is checked first, as on the Hub: a bad tag on a missing revision is a 404.
  auto commit = commit_at(call, *repo, revision);
  if (!commit) return;
  if (auto valid = hub_names::validate_ref_name(tag); !valid)
    return send_error(call.res, 400, "BadRequest", valid.error().message);
  auto changed = store->set_ref(key, Store::RefKind::kTag, tag, commit->id, /*must_not_exist=*/true);
  if (!changed) return send_error(call.res, 500, "InternalError", changed.error().message);
  if (*changed == Store::RefChange::kExists) {
    return send_error(call.res, 409, "RefExists", "Reference refs/tags/" + tag + " already exists");
  }
  send_json(call.res, 200, json::object());
}

void Server::Impl::delete_ref(Call& call, const RepoKey& key, Store::RefKind kind, const std::string& name) {
  auto repo = writable_repo(call, key);
  if (!repo) return;
  if (kind == Store::RefKind::kBranch && name == "main") {
    return send_error(call.res, 403, "Forbidden", "Cannot delete refs/heads/main: it is the default branch");
  }
  auto changed = store->set_ref(key, kind, name, std::nullopt, false);
  if (!changed) return send_error(call.res, 500, "InternalError", changed.error().message);
  if (*changed == Store::RefChange::kNotFound) {
    return send_error(call.res, 404, "RevisionNotFound",
                      "Invalid rev id: " + name + " (no " + (kind == Store::RefKind::kBranch ? "branch" : "tag") +
                          " of " + key.id() + " has that name)");
  }
  send_json(call.res, 200, json::object());
}

}  // namespace kernelhub::server
