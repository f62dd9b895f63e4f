#include "kernelhub/server/internal/store.hpp"

#include <sys/stat.h>

#include <nlohmann/json.hpp>
#include <system_error>

#include "digest_text.hpp"
#include "http_text.hpp"
#include "kernelhub/base/internal/atomic_file.hpp"
#include "kernelhub/base/internal/git_blob_sha1.hpp"
#include "kernelhub/base/internal/random_name.hpp"
#include "kernelhub/base/internal/read_file.hpp"
#include "kernelhub/base/internal/sha1.hpp"
#include "kernelhub/base/internal/sha256.hpp"

namespace kernelhub::server {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Note [Durable publish] (store.hpp): staged in tmp/, fsync'ed, renamed, the folder fsync'ed.
AtomicWrite durable_in(const fs::path& tmp_dir) {
  return {.durability = Durability::kFull, .staging_dir = tmp_dir};
}

// The `.gitattributes` the Hub puts in every new repo (its model-repo default), so a fresh repo
// has a `main` with one commit and LFS decided by pattern, as on the Hub. Kernel repos also
// track `*.so`: a kernel's shared libraries are binaries of any size.
constexpr std::string_view kInitialGitattributes =
    "*.7z filter=lfs diff=lfs merge=lfs -text\n"
    "*.arrow filter=lfs diff=lfs merge=lfs -text\n"
    "*.bin filter=lfs diff=lfs merge=lfs -text\n"
    "*.bz2 filter=lfs diff=lfs merge=lfs -text\n"
    "*.ckpt filter=lfs diff=lfs merge=lfs -text\n"
    "*.ftz filter=lfs diff=lfs merge=lfs -text\n"
    "*.gz filter=lfs diff=lfs merge=lfs -text\n"
    "*.h5 filter=lfs diff=lfs merge=lfs -text\n"
    "*.joblib filter=lfs diff=lfs merge=lfs -text\n"
    "*.lfs.* filter=lfs diff=lfs merge=lfs -text\n"
    "*.mlmodel filter=lfs diff=lfs merge=lfs -text\n"
    "*.model filter=lfs diff=lfs merge=lfs -text\n"
    "*.msgpack filter=lfs diff=lfs merge=lfs -text\n"
    "*.npy filter=lfs diff=lfs merge=lfs -text\n"
    "*.npz filter=lfs diff=lfs merge=lfs -text\n"
    "*.onnx filter=lfs diff=lfs merge=lfs -text\n"
    "*.ot filter=lfs diff=lfs merge=lfs -text\n"
    "*.parquet filter=lfs diff=lfs merge=lfs -text\n"
    "*.pb filter=lfs diff=lfs merge=lfs -text\n"
    "*.pickle filter=lfs diff=lfs merge=lfs -text\n"
    "*.pkl filter=lfs diff=lfs merge=lfs -text\n"
    "*.pt filter=lfs diff=lfs merge=lfs -text\n"
    "*.pth filter=lfs diff=lfs merge=lfs -text\n"
    "*.rar filter=lfs diff=lfs merge=lfs -text\n"
    "*.safetensors filter=lfs diff=lfs merge=lfs -text\n"
    "saved_model/**/* filter=lfs diff=lfs merge=lfs -text\n"
    "*.tar.* filter=lfs diff=lfs merge=lfs -text\n"
    "*.tar filter=lfs diff=lfs merge=lfs -text\n"
    "*.tflite filter=lfs diff=lfs merge=lfs -text\n"
    "*.tgz filter=lfs diff=lfs merge=lfs -text\n"
    "*.wasm filter=lfs diff=lfs merge=lfs -text\n"
    "*.xz filter=lfs diff=lfs merge=lfs -text\n"
    "*.zip filter=lfs diff=lfs merge=lfs -text\n"
    "*.zst filter=lfs diff=lfs merge=lfs -text\n"
    "*tfevents* filter=lfs diff=lfs merge=lfs -text\n";
constexpr std::string_view kKernelGitattributes = "*.so filter=lfs diff=lfs merge=lfs -text\n";

std::string lfs_pointer(std::string_view sha256, std::uint64_t size) {
  return "version https://git-lfs.github.com/spec/v1\noid sha256:" + std::string(sha256) + "\nsize " +
         std::to_string(size) + "\n";
}

json commit_to_json(const Commit& c) {
  json files = json::object();
  for (const auto& [path, e] : c.files) {
    files[path] = {{"sha256", e.sha256}, {"git_sha1", e.git_sha1}, {"size", e.size}, {"lfs", e.lfs}};
  }
  json out = {{"parent", c.parent}, {"title", c.title}, {"message", c.message}, {"date", c.date}, {"files", files}};
  if (!c.authors.empty()) out["authors"] = c.authors;
  return out;
}

json meta_to_json(const RepoMeta& meta) {
  json requests = json::array(), discussions = json::array();
  for (const auto& r : meta.access_requests) {
    requests.push_back(
        {{"user", r.user}, {"status", r.status}, {"timestamp", r.timestamp}, {"rejectionReason", r.rejection_reason}});
  }
  for (const auto& d : meta.discussions) {
    discussions.push_back({{"num", d.num},
                           {"title", d.title},
                           {"description", d.description},
                           {"author", d.author},
                           {"createdAt", d.created_at},
                           {"status", d.status},
                           {"isPullRequest", d.is_pull_request},
                           {"targetBranch", d.target_branch}});
  }
  return {{"private", meta.is_private},   {"gated", meta.gated},        {"gatedAccess", meta.gated_access},
          {"createdAt", meta.created_at}, {"accessRequests", requests}, {"discussions", discussions}};
}

RepoMeta meta_from_json(const json& m) {
  RepoMeta meta;
  meta.is_private = m.at("private").get<bool>();
  meta.gated = m.value("gated", "");
  meta.gated_access = m.value("gatedAccess", std::vector<std::string>{});
  meta.created_at = m.value("createdAt", "");
  for (const auto& r : m.value("accessRequests", json::array())) {
    meta.access_requests.push_back({r.at("user").get<std::string>(), r.at("status").get<std::string>(),
                                    r.at("timestamp").get<std::string>(), r.value("rejectionReason", "")});
  }
  for (const auto& d : m.value("discussions", json::array())) {
    meta.discussions.push_back({d.at("num").get<int>(), d.at("title").get<std::string>(), d.value("description", ""),
                                d.value("author", ""), d.at("createdAt").get<std::string>(),
                                d.at("status").get<std::string>(), d.at("isPullRequest").get<bool>(),
                                d.value("targetBranch", "main")});
  }
  return meta;
}

Result<Commit> commit_from_json(std::string_view text, const std::string& id) {
  const json j = json::parse(text, nullptr, false);
  try {
    if (j.is_discarded() || !j.is_object()) throw std::runtime_error("not a JSON object");
    Commit c;
    c.id = id;
    c.parent = j.at("parent").get<std::string>();
    c.title = j.at("title").get<std::string>();
    c.message = j.at("message").get<std::string>();
    c.date = j.at("date").get<std::string>();
    c.authors = j.value("authors", std::vector<std::string>{});
    for (const auto& [path, e] : j.at("files").items()) {
      c.files[path] = FileEntry{e.at("sha256").get<std::string>(), e.at("git_sha1").get<std::string>(),
                                e.at("size").get<std::uint64_t>(), e.at("lfs").get<bool>()};
    }
    return c;
  } catch (const std::exception& e) {
    return unexpected(ErrorCode::kCorruptFile, "commit `" + id + "` is unreadable: " + e.what());
  }
}

Status make_dirs(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return unexpected(ErrorCode::kIo, "cannot create `" + dir.string() + "`: " + ec.message());
  return {};
}

}  // namespace

Store::Store(fs::path root, Options options) : root_(std::move(root)), options_(options) {}
Store::~Store() = default;

Result<std::unique_ptr<Store>> Store::open(const fs::path& root, Options options) {
  std::error_code ec;
  fs::path absolute = fs::absolute(root, ec);
  if (ec) return unexpected(ErrorCode::kIo, "cannot resolve `" + root.string() + "`: " + ec.message());
  std::unique_ptr<Store> store(new Store(absolute, options));  // private constructor
  for (const char* sub : {"blobs", "repos", "tmp"}) KH_RETURN_IF_ERROR(make_dirs(absolute / sub));
  // Leftovers of writes interrupted by a crash: never referenced, safe to drop.
  for (const auto& entry : fs::directory_iterator(absolute / "tmp", ec)) fs::remove_all(entry.path(), ec);
  auto secret = read_file(absolute / "secret");
  if (secret && secret->size() >= 32) {
    store->secret_ = *secret;
  } else {
    store->secret_ = random_hex(32);
    AtomicWrite secret_file = durable_in(store->tmp_dir());
    secret_file.mode = 0600;
    KH_RETURN_IF_ERROR(write_file_atomic(absolute / "secret", store->secret_, secret_file));
  }
  KH_RETURN_IF_ERROR(store->load_all());
  if (auto moved = read_file(absolute / "moved.json")) {
    const json j = json::parse(*moved, nullptr, false);
    if (!j.is_array()) return unexpected(ErrorCode::kCorruptFile, "`moved.json` under --root is not a JSON list");
    for (const auto& m : j) {
      const auto type = m.is_object() ? repo_type_from_name(m.value("type", "")) : std::nullopt;
      auto from = type ? parse_repo_key(*type, m.value("from", ""))
                       : Result<RepoKey>(unexpected(ErrorCode::kInvalidArgument, ""));
      auto to = type ? parse_repo_key(*type, m.value("to", ""))
                     : Result<RepoKey>(unexpected(ErrorCode::kInvalidArgument, ""));
      if (!from || !to) return unexpected(ErrorCode::kCorruptFile, "`moved.json` under --root has a malformed entry");
      store->moved_[*from] = *to;
    }
  }
  return store;
}

fs::path Store::repo_dir(const RepoKey& key) const {
  return root_ / "repos" / std::string(api_segment(key.type)) / (key.ns.empty() ? std::string("-") : key.ns) / key.name;
}

Status Store::load_all() {
  std::error_code ec;
  for (RepoType type : kAllRepoTypes) {
    const fs::path type_root = root_ / "repos" / std::string(api_segment(type));
    if (!fs::is_directory(type_root, ec)) continue;
    for (const auto& ns_entry : fs::directory_iterator(type_root, ec)) {
      if (!ns_entry.is_directory()) continue;
      for (const auto& repo_entry : fs::directory_iterator(ns_entry.path(), ec)) {
        if (!repo_entry.is_directory()) continue;
        const std::string ns = ns_entry.path().filename() == "-" ? "" : ns_entry.path().filename().string();
        auto key = parse_repo_key(type, ns.empty() ? repo_entry.path().filename().string()
                                                   : ns + "/" + repo_entry.path().filename().string());
        if (!key) continue;  // not ours
        auto meta_text = read_file(repo_entry.path() / "repo.json");
        auto refs_text = read_file(repo_entry.path() / "refs.json");
        if (!meta_text || !refs_text) continue;  // a create that crashed before its refs: not a repo
        auto state = std::make_shared<RepoState>();
        state->key = *key;
        try {
          state->meta = meta_from_json(json::parse(*meta_text));
          const json r = json::parse(*refs_text);
          state->branches = r.at("branches").get<std::map<std::string, std::string>>();
          state->tags = r.at("tags").get<std::map<std::string, std::string>>();
          state->last_modified = r.value("lastModified", state->meta.created_at);
        } catch (const std::exception& e) {
          return unexpected(ErrorCode::kCorruptFile,
                            "repo files under `" + repo_entry.path().string() + "` do not parse: " + e.what());
        }
        repos_[*key] = std::move(state);
      }
    }
  }
  return {};
}

std::shared_ptr<const RepoState> Store::repo(const RepoKey& key) const {
  std::shared_lock lock(state_mutex_);
  auto it = repos_.find(key);
  return it == repos_.end() ? nullptr : it->second;
}

void Store::publish(std::shared_ptr<const RepoState> state) {
  std::unique_lock lock(state_mutex_);
  repos_[state->key] = std::move(state);
}

Status Store::write_repo_files(const RepoState& state, bool write_meta) {
  const fs::path dir = repo_dir(state.key);
  if (write_meta)
    KH_RETURN_IF_ERROR(write_file_atomic(dir / "repo.json", meta_to_json(state.meta).dump(1), durable_in(tmp_dir())));
  const json r = {{"branches", state.branches}, {"tags", state.tags}, {"lastModified", state.last_modified}};
  return write_file_atomic(dir / "refs.json", r.dump(1), durable_in(tmp_dir()));
}

Result<std::shared_ptr<const Commit>> Store::write_commit(const RepoKey& key, Commit commit) {
  json j = commit_to_json(commit);
  // The id covers the repo too, so equal histories in two repos never share a cache slot.
  commit.id = sha1_hex(std::string(to_string(key.type)) + ":" + key.id() + "\n" + j.dump());
  const fs::path dir = repo_dir(key) / "commits";
  KH_RETURN_IF_ERROR(make_dirs(dir));
  KH_RETURN_IF_ERROR(write_file_atomic(dir / (commit.id + ".json"), j.dump(1), durable_in(tmp_dir())));
  auto shared = std::make_shared<const Commit>(std::move(commit));
  std::lock_guard lock(commits_mutex_);
  commits_[repo_dir(key).string() + "@" + shared->id] = shared;
  return shared;
}

Status Store::save(std::shared_ptr<RepoState> state, bool write_meta) {
  KH_RETURN_IF_ERROR(write_repo_files(*state, write_meta));
  publish(std::move(state));
  return {};
}

Status Store::write_moved() {
  json out = json::array();
  {
    std::shared_lock lock(state_mutex_);
    for (const auto& [from, to] : moved_) {
      out.push_back({{"type", std::string(to_string(from.type))}, {"from", from.id()}, {"to", to.id()}});
    }
  }
  return write_file_atomic(root_ / "moved.json", out.dump(1), durable_in(tmp_dir()));
}

std::optional<RepoKey> Store::moved_to(const RepoKey& key) const {
  std::shared_lock lock(state_mutex_);
  auto it = moved_.find(key);
  return it == moved_.end() ? std::nullopt : std::optional<RepoKey>(it->second);
}

std::vector<std::shared_ptr<const RepoState>> Store::repos(RepoType type) const {
  std::shared_lock lock(state_mutex_);
  std::vector<std::shared_ptr<const RepoState>> out;
  for (const auto& [key, state] : repos_) {
    if (key.type == type) out.push_back(state);
  }
  return out;
}

std::shared_ptr<const RepoState> Store::repo_ignoring_case(const RepoKey& key) const {
  const std::string wanted = ascii_lower(key.id());
  std::shared_lock lock(state_mutex_);
  for (const auto& [other, state] : repos_) {
    if (other.type == key.type && ascii_lower(other.id()) == wanted) return state;
  }
  return nullptr;
}

Result<bool> Store::create_repo(const RepoKey& key, RepoMeta meta, const std::string& author) {
  std::lock_guard write_lock(write_mutex_);
  if (repo_ignoring_case(key)) return false;
  const fs::path dir = repo_dir(key);
  std::error_code ec;
  fs::remove_all(dir, ec);  // a create that crashed half-way left no refs.json: not a repo yet
  KH_RETURN_IF_ERROR(make_dirs(dir / "commits"));
  std::string attributes(kInitialGitattributes);
  if (key.type == RepoType::kKernel) attributes += kKernelGitattributes;
  KH_ASSIGN_OR_RETURN(std::string sha, put_blob(attributes));
  Commit initial;
  initial.title = "initial commit";
  initial.date = iso8601_now();
  if (!author.empty()) initial.authors = {author};
  initial.files[".gitattributes"] = FileEntry{sha, git_blob_sha1(attributes), attributes.size(), false};
  KH_ASSIGN_OR_RETURN(auto commit, write_commit(key, std::move(initial)));
  auto state = std::make_shared<RepoState>();
  state->key = key;
  meta.created_at = commit->date;
  state->meta = std::move(meta);
  state->branches["main"] = commit->id;
  state->last_modified = commit->date;
  // repo.json first, refs.json last: refs.json is what makes the directory a repo.
  KH_RETURN_IF_ERROR(write_repo_files(*state, true));
  publish(std::move(state));
  bool was_moved_away = false;
  {
    std::unique_lock lock(state_mutex_);
    was_moved_away = moved_.erase(key) > 0;  // the id is a repo of its own again
  }
  if (was_moved_away) KH_RETURN_IF_ERROR(write_moved());
  return true;
}

Result<bool> Store::delete_repo(const RepoKey& key) {
  std::lock_guard write_lock(write_mutex_);
  if (!repo(key)) return false;
  const fs::path dir = repo_dir(key);
  const fs::path trash = tmp_dir() / ("deleted-" + random_hex(8));
  if (::rename(dir.c_str(), trash.c_str()) != 0) {
    return unexpected(os_error("cannot remove repo folder `" + dir.string() + "`", errno));
  }
  KH_RETURN_IF_ERROR(fsync_directory(dir.parent_path()));
  {
    std::unique_lock lock(state_mutex_);
    repos_.erase(key);
  }
  std::error_code ec;
  fs::remove_all(trash, ec);
  return true;
}

Result<bool> Store::update_meta(const RepoKey& key, const std::function<void(RepoMeta&)>& change) {
  std::lock_guard write_lock(write_mutex_);
  auto current = repo(key);
  if (!current) return false;
  auto next = std::make_shared<RepoState>(*current);
  const std::string created = next->meta.created_at;
  change(next->meta);
  next->meta.created_at = created;
  KH_RETURN_IF_ERROR(write_repo_files(*next, true));
  publish(std::move(next));
  return true;
}

std::optional<std::string> Store::resolve(const RepoState& repo, std::string_view revision) const {
  // Full ref names, as `kernels` sends them (`refs/heads/v1`); `refs/pr/N` is stored as is.
  if (revision.starts_with("refs/heads/")) {
    auto it = repo.branches.find(std::string(revision.substr(11)));
    return it == repo.branches.end() ? std::nullopt : std::optional<std::string>(it->second);
  }
  if (revision.starts_with("refs/tags/")) {
    auto it = repo.tags.find(std::string(revision.substr(10)));
    return it == repo.tags.end() ? std::nullopt : std::optional<std::string>(it->second);
  }
  if (auto it = repo.branches.find(std::string(revision)); it != repo.branches.end()) return it->second;
  if (auto it = repo.tags.find(std::string(revision)); it != repo.tags.end()) return it->second;
  if (revision.size() < 7 || revision.size() > 40 || !is_hex(revision)) return std::nullopt;
  const fs::path dir = repo_dir(repo.key) / "commits";
  std::error_code ec;
  if (revision.size() == 40) {
    if (fs::exists(dir / (std::string(revision) + ".json"), ec)) return std::string(revision);
    return std::nullopt;
  }
  std::optional<std::string> found;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().stem().string();
    if (name.starts_with(revision)) {
      if (found) return std::nullopt;  // ambiguous prefix
      found = name;
    }
  }
  return found;
}

Result<std::shared_ptr<const Commit>> Store::commit(const RepoKey& key, std::string_view commit_id) const {
  const std::string cache_key = repo_dir(key).string() + "@" + std::string(commit_id);
  {
    std::lock_guard lock(commits_mutex_);
    if (auto it = commits_.find(cache_key); it != commits_.end()) return it->second;
  }
  if (commit_id.size() != 40 || !is_hex(commit_id)) {
    return unexpected(ErrorCode::kNotFound, "no commit `" + std::string(commit_id) + "`");
  }
  auto text = read_file(repo_dir(key) / "commits" / (std::string(commit_id) + ".json"));
  if (!text) return unexpected(text.error());
  KH_ASSIGN_OR_RETURN(Commit c, commit_from_json(*text, std::string(commit_id)));
  auto shared = std::make_shared<const Commit>(std::move(c));
  std::lock_guard lock(commits_mutex_);
  commits_.emplace(cache_key, shared);
  return shared;
}

Result<Store::RefChange> Store::set_ref(const RepoKey& key, RefKind kind, const std::string& name,
                                        std::optional<std::string> target, bool must_not_exist) {
  std::lock_guard write_lock(write_mutex_);
  auto current = repo(key);
  if (!current) return RefChange::kRepoNotFound;
  auto next = std::make_shared<RepoState>(*current);
  auto& refs = kind == RefKind::kBranch ? next->branches : next->tags;
  if (target) {
    if (refs.contains(name) && must_not_exist) return RefChange::kExists;
    refs[name] = *target;
  } else {
    if (refs.erase(name) == 0) return RefChange::kNotFound;
  }
  next->last_modified = iso8601_now();
  KH_RETURN_IF_ERROR(write_repo_files(*next, false));
  publish(std::move(next));
  return RefChange::kDone;
}

Result<CommitOutcome> Store::apply_commit(const RepoKey& key, const CommitRequest& request) {
  using S = CommitOutcome::Status;
  std::lock_guard write_lock(write_mutex_);
  auto current = repo(key);
  if (!current) return CommitOutcome{S::kRepoNotFound, {}, key.id()};
  auto head_it = current->branches.find(request.branch);
  if (head_it == current->branches.end()) return CommitOutcome{S::kBranchNotFound, {}, request.branch};
  const std::string head = head_it->second;
  if (request.parent_commit && !head.starts_with(*request.parent_commit)) {
    return CommitOutcome{S::kParentMismatch, {}, head};
  }
  KH_ASSIGN_OR_RETURN(auto parent, commit(key, head));
  Commit next;
  next.parent = head;
  next.title = request.title;
  next.message = request.message;
  next.date = iso8601_now();
  next.files = parent->files;
  if (!request.author.empty()) next.authors = {request.author};
  for (const CommitOperation& op : request.operations) {
    switch (op.kind) {
      case CommitOperation::Kind::kAddBlob: {
        const auto size = blob_size(op.sha256);
        if (!size) return CommitOutcome{S::kMissingBlob, {}, op.path + " (sha256 " + op.sha256 + ")"};
        if (op.size && *op.size != *size) {
          return CommitOutcome{S::kSizeMismatch,
                               {},
                               op.path + ": announced " + std::to_string(*op.size) + " bytes, stored object has " +
                                   std::to_string(*size)};
        }
        FileEntry entry{op.sha256, {}, *size, op.lfs || *size >= options_.lfs_threshold};
        if (entry.lfs) {
          entry.git_sha1 = git_blob_sha1(lfs_pointer(op.sha256, *size));
        } else {
          KH_ASSIGN_OR_RETURN(entry.git_sha1, git_sha1_of_blob(op.sha256));
        }
        // A file replaces a folder of the same name and vice versa only through explicit deletes.
        next.files[op.path] = std::move(entry);
        break;
      }
      case CommitOperation::Kind::kDeleteFile: {
        if (next.files.erase(op.path) != 0) break;
        // A `deletedFile` naming a folder deletes the folder, as on the Hub (huggingface_hub sends
        // `deletedFile` for a path without a trailing `/`).
        const std::string prefix = op.path + "/";
        auto it = next.files.lower_bound(prefix);
        if (it == next.files.end() || !it->first.starts_with(prefix))
          return CommitOutcome{S::kEntryNotFound, {}, op.path};
        while (it != next.files.end() && it->first.starts_with(prefix)) it = next.files.erase(it);
        break;
      }
      case CommitOperation::Kind::kDeleteFolder: {
        const std::string prefix = op.path + "/";
        auto it = next.files.lower_bound(prefix);
        if (it == next.files.end() || !it->first.starts_with(prefix)) {
          return CommitOutcome{S::kEntryNotFound, {}, op.path + "/"};
        }
        while (it != next.files.end() && it->first.starts_with(prefix)) it = next.files.erase(it);
        break;
      }
    }
  }
  KH_ASSIGN_OR_RETURN(auto written, write_commit(key, std::move(next)));
  auto state = std::make_shared<RepoState>(*current);
  state->branches[request.branch] = written->id;
  state->last_modified = written->date;
  KH_RETURN_IF_ERROR(write_repo_files(*state, false));
  publish(std::move(state));
  return CommitOutcome{S::kCommitted, written->id, {}};
}

Result<Store::MoveOutcome> Store::move_repo(const RepoKey& from, const RepoKey& to) {
  std::lock_guard write_lock(write_mutex_);
  auto current = repo(from);
  if (!current) return MoveOutcome::kNotFound;
  if (from == to) return MoveOutcome::kMoved;  // nothing to do, and no redirect to itself
  if (auto other = repo_ignoring_case(to); other && other->key != from) return MoveOutcome::kExists;
  const fs::path source = repo_dir(from);
  const fs::path target = repo_dir(to);
  KH_RETURN_IF_ERROR(make_dirs(target.parent_path()));
  if (::rename(source.c_str(), target.c_str()) != 0) {
    return unexpected(
        os_error("cannot move repo folder `" + source.string() + "` to `" + target.string() + "`", errno));
  }
  KH_RETURN_IF_ERROR(fsync_directory(target.parent_path()));
  KH_RETURN_IF_ERROR(fsync_directory(source.parent_path()));
  auto next = std::make_shared<RepoState>(*current);
  next->key = to;
  {
    std::unique_lock lock(state_mutex_);
    repos_.erase(from);
    repos_[to] = std::move(next);
    moved_.erase(to);
    moved_[from] = to;
  }
  KH_RETURN_IF_ERROR(write_moved());
  return MoveOutcome::kMoved;
}

Result<CommitOutcome> Store::squash_branch(const RepoKey& key, const std::string& branch, const std::string& title,
                                           const std::string& author) {
  using S = CommitOutcome::Status;
  std::lock_guard write_lock(write_mutex_);
  auto current = repo(key);
  if (!current) return CommitOutcome{S::kRepoNotFound, {}, key.id()};
  auto head = current->branches.find(branch);
  if (head == current->branches.end()) return CommitOutcome{S::kBranchNotFound, {}, branch};
  KH_ASSIGN_OR_RETURN(auto tip, commit(key, head->second));
  Commit squashed;
  squashed.title = title;
  squashed.date = iso8601_now();
  squashed.files = tip->files;
  if (!author.empty()) squashed.authors = {author};
  KH_ASSIGN_OR_RETURN(auto written, write_commit(key, std::move(squashed)));
  auto state = std::make_shared<RepoState>(*current);
  state->branches[branch] = written->id;
  state->last_modified = written->date;
  KH_RETURN_IF_ERROR(save(std::move(state), false));
  return CommitOutcome{S::kCommitted, written->id, {}};
}

Result<std::size_t> Store::remove_lfs_objects(const RepoKey& key, const std::set<std::string>& oids) {
  std::lock_guard write_lock(write_mutex_);
  auto current = repo(key);
  if (!current) return std::size_t{0};
  std::map<std::string, std::string> rewritten;  // old commit id → new one (or itself)
  // Rewrites `id` and its ancestors, oldest first; iterative, so long histories cannot overflow the stack.
  auto rewrite = [&](const std::string& tip) -> Result<std::string> {
    std::vector<std::shared_ptr<const Commit>> chain;
    for (std::string id = tip; !id.empty() && !rewritten.contains(id);) {
      KH_ASSIGN_OR_RETURN(auto c, commit(key, id));
      chain.push_back(c);
      id = c->parent;
    }
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      const Commit& old = **it;
      const std::string parent = old.parent.empty() ? "" : rewritten.at(old.parent);
      bool touched = parent != old.parent;
      Commit next = old;
      next.parent = parent;
      for (auto f = next.files.begin(); f != next.files.end();) {
        if (f->second.lfs && oids.contains(f->second.sha256)) {
          f = next.files.erase(f);
          touched = true;
        } else {
          ++f;
        }
      }
      if (!touched) {
        rewritten[old.id] = old.id;
        continue;
      }
      KH_ASSIGN_OR_RETURN(auto written, write_commit(key, std::move(next)));
      rewritten[old.id] = written->id;
    }
    return rewritten.at(tip);
  };
  auto state = std::make_shared<RepoState>(*current);
  std::size_t moved = 0;
  for (auto* refs : {&state->branches, &state->tags}) {
    for (auto& [name, target] : *refs) {
      KH_ASSIGN_OR_RETURN(std::string next, rewrite(target));
      if (next != target) {
        target = next;
        ++moved;
      }
    }
  }
  if (moved == 0) return moved;
  state->last_modified = iso8601_now();
  KH_RETURN_IF_ERROR(save(std::move(state), false));
  return moved;
}

Result<int> Store::open_discussion(const RepoKey& key, Discussion discussion, const std::string& base_commit) {
  std::lock_guard write_lock(write_mutex_);
  auto current = repo(key);
  if (!current) return 0;
  auto state = std::make_shared<RepoState>(*current);
  int num = static_cast<int>(state->meta.discussions.size()) + 1;
  while (state->branches.contains("refs/pr/" + std::to_string(num))) ++num;  // a ref left by a crash
  discussion.num = num;
  if (discussion.is_pull_request) {
    state->branches["refs/pr/" + std::to_string(num)] = base_commit;
    state->last_modified = iso8601_now();
  }
  state->meta.discussions.push_back(std::move(discussion));
  KH_RETURN_IF_ERROR(save(std::move(state), true));
  return num;
}

fs::path Store::blob_path(std::string_view sha256) const {
  return root_ / "blobs" / std::string(sha256.substr(0, 2)) / std::string(sha256);
}

std::optional<std::uint64_t> Store::blob_size(std::string_view sha256) const {
  if (!is_sha256_hex(sha256)) return std::nullopt;
  struct stat st {};
  if (::stat(blob_path(sha256).c_str(), &st) != 0) return std::nullopt;
  return static_cast<std::uint64_t>(st.st_size);
}

Result<std::string> Store::put_blob(std::string_view bytes) {
  const std::string sha = to_hex(sha256(bytes));
  if (blob_size(sha)) return sha;
  KH_RETURN_IF_ERROR(make_dirs(blob_path(sha).parent_path()));
  KH_RETURN_IF_ERROR(write_file_atomic(blob_path(sha), bytes, durable_in(tmp_dir())));
  return sha;
}

Status Store::adopt_blob(const fs::path& temp_file, std::string_view sha256) {
  const fs::path target = blob_path(sha256);
  KH_RETURN_IF_ERROR(make_dirs(target.parent_path()));
  return rename_into_place(temp_file, target, Durability::kFull);
}

Result<std::string> Store::read_blob(std::string_view sha256, std::uint64_t max_bytes) const {
  const auto size = blob_size(sha256);
  if (!size) return unexpected(ErrorCode::kNotFound, "no blob `" + std::string(sha256) + "`");
  if (*size > max_bytes) {
    return unexpected(ErrorCode::kInvalidArgument, "blob `" + std::string(sha256) + "` has " + std::to_string(*size) +
                                                       " bytes, more than the " + std::to_string(max_bytes) +
                                                       " read here");
  }
  return read_file(blob_path(sha256));
}

Result<std::string> Store::git_sha1_of_blob(std::string_view sha256) const {
  if (!blob_size(sha256)) return unexpected(ErrorCode::kNotFound, "no blob `" + std::string(sha256) + "`");
  return git_blob_sha1_file(blob_path(sha256));
}

}  // namespace kernelhub::server
