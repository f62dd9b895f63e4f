#include "fake_hub.hpp"

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

#include "kernelhub/base/internal/git_blob_sha1.hpp"
#include "kernelhub/base/internal/sha256.hpp"

namespace kernelhub::testing {

std::string sha256_hex(const std::string& content) {
  return to_hex(sha256(content));
}

namespace {
void json_error(httplib::Response& res, int status, const std::string& code, const std::string& message,
                const std::string& commit = "") {
  res.status = status;
  res.set_header("X-Error-Code", code);
  res.set_header("X-Error-Message", message);
  if (!commit.empty()) res.set_header("X-Repo-Commit", commit);
  res.set_content(nlohmann::json{{"error", message}}.dump(), "application/json");
}
}  // namespace

FakeHub::FakeHub() {
  hub_.Get(R"(/api/kernels/([^/]+/[^/]+)/revision/(.+))", [this](const httplib::Request& req, httplib::Response& res) {
    record("hub", req);
    if (redirect_api(req, res)) return;
    const Repo* repo = find_repo(req.matches[1]);
    if (!repo) return json_error(res, 404, "RepoNotFound", "Repository not found");
    std::string rev = req.matches[2];
    std::string commit;
    if (auto it = repo->refs.find(rev); it != repo->refs.end()) commit = it->second;
    if (rev.size() >= 5 && repo->commit.starts_with(rev)) commit = repo->commit;
    if (commit.empty()) return json_error(res, 404, "RevisionNotFound", "Invalid rev id: " + rev);
    res.set_content(nlohmann::json{{"id", std::string(req.matches[1])}, {"sha", commit}, {"private", false}}.dump(),
                    "application/json");
  });
  hub_.Get(R"(/api/kernels/([^/]+/[^/]+)/refs)", [this](const httplib::Request& req, httplib::Response& res) {
    record("hub", req);
    if (redirect_api(req, res)) return;
    const Repo* repo = find_repo(req.matches[1]);
    if (!repo) return json_error(res, 404, "RepoNotFound", "Repository not found");
    nlohmann::json branches = nlohmann::json::array();
    for (const auto& [name, commit] : repo->refs) {
      if (name == "t1") continue;
      branches.push_back({{"name", name}, {"ref", "refs/heads/" + name}, {"targetCommit", commit}});
    }
    nlohmann::json tags =
        nlohmann::json::array({{{"name", "t1"}, {"ref", "refs/tags/t1"}, {"targetCommit", repo->commit}}});
    res.set_content(
        nlohmann::json{{"branches", branches}, {"tags", tags}, {"converts", nlohmann::json::array()}}.dump(),
        "application/json");
  });
  hub_.Get(R"(/api/kernels/([^/]+/[^/]+)/tree/([^/]+))", [this](const httplib::Request& req, httplib::Response& res) {
    record("hub", req);
    if (redirect_api(req, res)) return;
    const Repo* repo = find_repo(req.matches[1]);
    if (!repo) return json_error(res, 404, "RepoNotFound", "Repository not found");
    if (req.matches[2] != repo->commit && !repo->refs.contains(req.matches[2])) {
      return json_error(res, 404, "RevisionNotFound", "Invalid rev id");
    }
    const std::size_t cursor = req.has_param("cursor") ? std::stoul(req.get_param_value("cursor")) : 0;
    nlohmann::json page = nlohmann::json::array();
    std::size_t i = cursor;
    for (; i < repo->files.size() && page.size() < page_size_; ++i) {
      const FakeFile& f = repo->files[i];
      nlohmann::json entry = {
          {"type", "file"}, {"path", f.path}, {"size", f.content.size()}, {"oid", git_blob_sha1(f.content)}};
      if (f.lfs) entry["lfs"] = {{"oid", sha256_hex(f.content)}, {"size", f.content.size()}, {"pointerSize", 130}};
      page.push_back(entry);
    }
    if (i < repo->files.size()) {
      res.set_header("Link", "<" + endpoint() + "/api/kernels/" + std::string(req.matches[1]) + "/tree/" +
                                 std::string(req.matches[2]) + "?recursive=true&cursor=" + std::to_string(i) +
                                 ">; rel=\"next\"");
    }
    res.set_content(page.dump(), "application/json");
  });
  hub_.Get(R"(/kernels/([^/]+/[^/]+)/resolve/([^/]+)/(.+))", [this](const httplib::Request& req,
                                                                    httplib::Response& res) {
    record("hub", req);
    {
      std::lock_guard lock(mutex_);
      if (!required_token_.empty() && req.get_header_value("Authorization") != "Bearer " + required_token_) {
        return json_error(res, 401, "GatedRepo", "Access to this repo is restricted");
      }
      if (faults_.redirect_loop) {
        res.status = 302;
        res.set_header("Location", req.path);
        return;
      }
    }
    const Repo* repo = find_repo(req.matches[1]);
    if (!repo) return json_error(res, 404, "RepoNotFound", "Repository not found");
    const std::string rev = req.matches[2];
    if (rev != repo->commit && !repo->refs.contains(rev))
      return json_error(res, 404, "RevisionNotFound", "Invalid rev id");
    const std::string path = req.matches[3];
    auto it = std::find_if(repo->files.begin(), repo->files.end(), [&](const FakeFile& f) { return f.path == path; });
    if (it == repo->files.end()) return json_error(res, 404, "EntryNotFound", path + " does not exist", repo->commit);
    res.set_header("X-Repo-Commit", repo->commit);
    bool cross;
    {
      std::lock_guard lock(mutex_);
      cross = it->lfs || faults_.cross_host_regular;
    }
    if (cross) {
      const std::string sha = sha256_hex(it->content);
      res.status = 302;
      res.set_header("Location", "http://" + storage_host() + "/blob/" + sha + "?sig=secret");
      res.set_header("X-Linked-Etag", "\"" + (it->lfs ? sha : git_blob_sha1(it->content)) + "\"");
      res.set_header("X-Linked-Size", std::to_string(it->content.size()));
      res.set_header("ETag", "\"" + git_blob_sha1(it->content) + "\"");
      res.set_content("Found. Redirecting", "text/plain");
      // As the Hub: a Range is for the file, not for the redirect (httplib would apply it to this
      // body and answer 416). httplib owns the Request as a non-const local.
      const_cast<httplib::Request&>(req).ranges.clear();
      return;
    }
    res.set_header("ETag", "\"" + git_blob_sha1(it->content) + "\"");
    if (req.method == "HEAD") {
      res.set_header("Content-Length", std::to_string(it->content.size()));
      res.status = 200;
      return;
    }
    serve_bytes(req, res, it->content);
  });
  storage_.Get(R"(/blob/([0-9a-f]{64}))", [this](const httplib::Request& req, httplib::Response& res) {
    record("storage", req);
    const FakeFile* file = find_blob(req.matches[1]);
    if (!file) {
      res.status = 404;
      return;
    }
    serve_bytes(req, res, file->content);
  });
  for (httplib::Server* server : {&hub_, &storage_}) {
    server->set_pre_routing_handler([this](const httplib::Request&, httplib::Response&) {
      hold_if_silent();
      return httplib::Server::HandlerResponse::Unhandled;
    });
  }
  // The far end of Faults::api_hops, on either host: back to where the client was going.
  for (httplib::Server* server : {&hub_, &storage_}) {
    server->Get("/__hop", [this, server](const httplib::Request& req, httplib::Response& res) {
      record(server == &hub_ ? "hub" : "storage", req);
      res.status = 307;
      res.set_header("Location", req.get_param_value("to"));
    });
  }
  hub_port_ = hub_.bind_to_any_port("127.0.0.1");
  storage_port_ = storage_.bind_to_any_port("127.0.0.2");
  hub_thread_ = std::thread([this] { hub_.listen_after_bind(); });
  storage_thread_ = std::thread([this] { storage_.listen_after_bind(); });
  // The sockets are bound already, so early connections queue; this only avoids racing stop().
  while (!hub_.is_running() || !storage_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

FakeHub::~FakeHub() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  faults_changed_.notify_all();
  hub_.stop();
  storage_.stop();
  hub_thread_.join();
  storage_thread_.join();
}

void FakeHub::add_kernel(const std::string& name, std::vector<FakeFile> files) {
  std::sort(files.begin(), files.end(), [](const FakeFile& a, const FakeFile& b) { return a.path < b.path; });
  Repo repo;
  repo.commit = git_blob_sha1("commit of " + name);
  repo.files = std::move(files);
  for (const char* ref : {"main", "v1", "v2", "t1"}) repo.refs[ref] = repo.commit;
  std::lock_guard lock(mutex_);
  repos_[name] = std::move(repo);
}

bool FakeHub::redirect_api(const httplib::Request& req, httplib::Response& res) {
  std::lock_guard lock(mutex_);
  if (faults_.api_hops <= 0) return false;
  --faults_.api_hops;
  const std::string here = endpoint() + req.target;
  const std::string hop_host = faults_.api_hops_via_storage ? "http://" + storage_host() : endpoint();
  res.status = 307;
  res.set_header("Location", hop_host + "/__hop?to=" + httplib::detail::encode_query_param(here));
  return true;
}

std::string FakeHub::commit(const std::string& repo) const {
  std::lock_guard lock(mutex_);
  return repos_.at(repo).commit;
}

void FakeHub::set_faults(Faults faults) {
  {
    std::lock_guard lock(mutex_);
    faults_ = std::move(faults);
  }
  faults_changed_.notify_all();
}

void FakeHub::hold_if_silent() {
  std::unique_lock lock(mutex_);
  faults_changed_.wait(lock, [this] { return stopping_ || !faults_.silent; });
}

std::vector<SeenRequest> FakeHub::requests() const {
  std::lock_guard lock(mutex_);
  return seen_;
}

int FakeHub::count(const std::string& host, const std::string& method) const {
  std::lock_guard lock(mutex_);
  return static_cast<int>(std::count_if(seen_.begin(), seen_.end(), [&](const SeenRequest& r) {
    return r.host == host && (method.empty() || r.method == method);
  }));
}

void FakeHub::clear_requests() {
  std::lock_guard lock(mutex_);
  seen_.clear();
}

const FakeHub::Repo* FakeHub::find_repo(const std::string& repo) const {
  std::lock_guard lock(mutex_);
  auto it = repos_.find(repo);
  return it == repos_.end() ? nullptr : &it->second;
}

const FakeFile* FakeHub::find_blob(const std::string& sha256) const {
  std::lock_guard lock(mutex_);
  for (const auto& [name, repo] : repos_) {
    for (const FakeFile& f : repo.files) {
      if (sha256_hex(f.content) == sha256) return &f;
    }
  }
  return nullptr;
}

void FakeHub::record(const std::string& host, const httplib::Request& req) {
  std::lock_guard lock(mutex_);
  seen_.push_back(
      SeenRequest{host, req.method, req.path, req.get_header_value("Authorization"), req.get_header_value("Range")});
}

void FakeHub::serve_bytes(const httplib::Request& req, httplib::Response& res, const std::string& content) {
  int status = 0;
  int retry_after = -1;
  bool reset = false, slow = false, flip = false, short_body = false;
  std::size_t reset_after = 0;
  int slow_ms = 0;
  {
    std::lock_guard lock(mutex_);
    if (!faults_.statuses.empty()) {
      status = faults_.statuses.front();
      faults_.statuses.erase(faults_.statuses.begin());
      retry_after = faults_.retry_after_s;
    } else if (faults_.resets > 0) {
      --faults_.resets;
      reset = true;
      reset_after = faults_.reset_after;
    } else if (faults_.slow > 0) {
      --faults_.slow;
      slow = true;
      slow_ms = faults_.slow_ms;
    } else if (faults_.flips > 0) {
      --faults_.flips;
      flip = true;
    }
    short_body = faults_.short_body_always;
  }
  if (status != 0) {
    res.status = status;
    if (status == 429 && retry_after >= 0) res.set_header("Retry-After", std::to_string(retry_after));
    res.set_content("{\"error\": \"injected\"}", "application/json");
    return;
  }
  auto body = std::make_shared<std::string>(content);
  if (flip && !body->empty()) (*body)[body->size() / 2] ^= 0x01;
  auto sent = std::make_shared<std::size_t>(0);
  res.set_header("Accept-Ranges", "bytes");
  res.set_content_provider(body->size(), "application/octet-stream",
                           [body, sent, reset, reset_after, slow, slow_ms, short_body](
                               std::size_t offset, std::size_t length, httplib::DataSink& sink) {
                             if (slow && *sent == 0) std::this_thread::sleep_for(std::chrono::milliseconds(slow_ms));
                             std::size_t n = std::min<std::size_t>(length, 65536);
                             if (reset && *sent + n > reset_after) {
                               sink.write(body->data() + offset, reset_after - *sent);
                               return false;  // cut the connection mid-body
                             }
                             if (short_body && offset + n > body->size() / 2) {
                               // Never past the middle of the file, whatever range is asked for.
                               if (offset < body->size() / 2)
                                 sink.write(body->data() + offset, body->size() / 2 - offset);
                               return false;
                             }
                             sink.write(body->data() + offset, n);
                             *sent += n;
                             return true;
                           });
  (void)req;
}

}  // namespace kernelhub::testing
