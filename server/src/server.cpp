#include "kernelhub/server/internal/server.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <ctime>

#include "digest_text.hpp"
#include "http_text.hpp"
#include "kernelhub/base/internal/random_name.hpp"
#include "server_impl.hpp"

namespace kernelhub::server {
namespace {

// Path segments that follow a repo id in /api/{T}/{id}/…; they tell a single-segment id
// (`/api/models/gpt2/refs`) from a namespaced one (`/api/models/org/name`).
bool is_api_subroute(std::string_view s) {
  return s == "revision" || s == "tree" || s == "paths-info" || s == "refs" || s == "preupload" || s == "commit" ||
         s == "branch" || s == "tag" || s == "settings" || s == "commits" || s == "auth-check" || s == "super-squash" ||
         s == "lfs-files" || s == "user-access-request" || s == "discussions";
}

std::string join(const std::vector<std::string>& segs, std::size_t from) {
  std::string out;
  for (std::size_t i = from; i < segs.size(); ++i) {
    if (i > from) out.push_back('/');
    out += segs[i];
  }
  return out;
}

// Header values must be one printable ASCII line.
std::string header_safe(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, 1000)) out.push_back((c >= 0x20 && c < 0x7f) ? c : ' ');
  return out;
}

std::string host_of(std::string_view url) {
  std::string_view rest = url.substr(url.find("://") == std::string_view::npos ? 0 : url.find("://") + 3);
  rest = rest.substr(0, rest.find('/'));
  if (rest.starts_with('[')) return std::string(rest.substr(0, rest.find(']') + 1));
  return std::string(rest.substr(0, rest.find(':')));
}

// An NDJSON commit (POST /api/{T}s/{id}/commit/{rev}, not JSON): its body is streamed by its
// route instead of being read whole (ServerOptions::max_commit_body_bytes).
bool is_streamed_commit(const httplib::Request& req) {
  if (req.method != "POST" || !req.path.starts_with("/api/")) return false;
  if (req.get_header_value("Content-Type").starts_with("application/json")) return false;
  const std::string_view path = req.path;
  const std::size_t at = path.find("/commit/");
  // /api/{T}s/{id}/commit/{rev}: two or three segments before `commit`.
  return at != std::string_view::npos &&
         std::count(path.begin(), path.begin() + static_cast<std::ptrdiff_t>(at), '/') <= 4;
}

// An id a client sent that can go back in a header and the log: one line of printable ASCII.
std::optional<std::string> usable_id(const httplib::Request& req, const char* header) {
  const std::string value = req.get_header_value(header);
  if (value.empty() || value.size() > 200) return std::nullopt;
  for (char c : value) {
    if (c < 0x21 || c > 0x7e) return std::nullopt;
  }
  return value;
}

// Every answer carries an id, as the Hub's do: huggingface_hub prints it in its error messages
// ("(Request ID: ...)") so that a failure can be found in the server's log. The client's own id
// comes back when it sent one (X-Request-Id, else the X-Amzn-Trace-Id huggingface_hub puts on
// every request), so the client's logs and ours name a request the same way; else a new one.
void set_request_id(const httplib::Request& req, httplib::Response& res) {
  if (res.has_header("X-Request-Id")) return;
  const auto trace = usable_id(req, "X-Amzn-Trace-Id");
  if (trace) res.set_header("X-Amzn-Trace-Id", *trace);
  const auto own = usable_id(req, "X-Request-Id");
  res.set_header("X-Request-Id", own ? *own : trace ? *trace : "Root=1-" + random_hex(12));
}

}  // namespace

bool Call::query_flag(const std::string& key) const {
  auto it = query.find(key);
  if (it == query.end()) return false;
  return it->second == "1" || it->second == "true" || it->second == "True";
}

std::string Call::query_value(const std::string& key) const {
  auto it = query.find(key);
  return it == query.end() ? std::string() : it->second;
}

std::string dump_json(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

void send_json(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(dump_json(body), "application/json; charset=utf-8");
}

void send_error(httplib::Response& res, int status, std::string_view code, std::string_view message,
                std::string_view repo_commit) {
  res.status = status;
  // Never kept by a cache (Note [Answers a shared cache may keep]), even an answer marked
  // cacheable before it failed (a 416).
  res.headers.erase("Cache-Control");
  res.set_header("Cache-Control", "no-store");
  if (!code.empty()) res.set_header("X-Error-Code", std::string(code));
  res.set_header("X-Error-Message", header_safe(message));
  if (!repo_commit.empty()) res.set_header("X-Repo-Commit", std::string(repo_commit));
  res.set_content(dump_json(json{{"error", message}}), "application/json; charset=utf-8");
}

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Server::~Server() {
  stop();
}

Result<std::unique_ptr<Server>> Server::create(ServerOptions options) {
  if (options.root.empty()) return unexpected(ErrorCode::kInvalidArgument, "--root is required");
  if (options.port < 0 || options.port > 65535) {
    return unexpected(ErrorCode::kInvalidArgument, "--port must be 0..65535, got " + std::to_string(options.port));
  }
  if (options.tree_page_size == 0) return unexpected(ErrorCode::kInvalidArgument, "tree page size must be > 0");
  auto impl = std::make_unique<Impl>();
  KH_ASSIGN_OR_RETURN(impl->store, Store::open(options.root, Store::Options{options.lfs_threshold}));
  if (!options.tokens_file.empty()) {
    KH_ASSIGN_OR_RETURN(impl->policy, AccessPolicy::load(options.tokens_file));
  }
  for (const auto& org : options.trusted_publishers) impl->policy.trust_publisher(org);
  impl->options = std::move(options);
  return std::unique_ptr<Server>(new Server(std::move(impl)));  // private constructor
}

Status Server::start() {
  Impl& s = *impl_;
  if (s.running) return {};
  s.install_routes();
  const std::string& host = s.options.host;
  // Note [One server per port]: cpp-httplib sets SO_REUSEPORT on its listening socket, which lets a
  // second server (a stale one, a second deployment) bind the same port and take a random share of
  // the connections, tokens included, with neither saying a word. Only SO_REUSEADDR here (a
  // restarted server still binds while old connections linger in TIME_WAIT): a busy port fails the
  // bind, and start() says whose it is likely to be.
  s.listen_fd = -1;
  s.http.set_socket_options([&s](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    s.listen_fd = sock;  // the last one tried is the one that binds
  });
  errno = 0;
  if (s.options.port == 0) {
    s.port = s.http.bind_to_any_port(host);
    if (s.port <= 0) return unexpected(os_error("cannot listen on " + host + " (any port)", errno));
  } else {
    if (!s.http.bind_to_port(host, s.options.port)) {
      const int why = errno;
      const std::string where = host + ":" + std::to_string(s.options.port);
      if (why == EADDRINUSE) {
        return unexpected(ErrorCode::kIo, "cannot listen on " + where +
                                              ": the port is already in use (another `kernelhub serve`, or another "
                                              "server); stop it, or choose another --port");
      }
      return unexpected(os_error("cannot listen on " + where, why != 0 ? why : EADDRNOTAVAIL));
    }
    s.port = s.options.port;
  }
  // The backlog cpp-httplib was built with (5) refuses connections a burst of clients makes at
  // once; listen() again on the bound socket raises it.
  if (s.listen_fd >= 0) ::listen(s.listen_fd, SOMAXCONN);
  const std::string url_host = (host == "0.0.0.0" || host.empty()) ? "127.0.0.1" : host;
  const std::string port = std::to_string(s.port);
  s.public_url = s.options.public_url.empty() ? "http://" + url_host + ":" + port : s.options.public_url;
  while (s.public_url.ends_with('/')) s.public_url.pop_back();
  if (!s.options.storage_url.empty()) {
    s.storage_url = s.options.storage_url;
  } else {
    // A different host name for the same listener: clients decide
    // from the host name whether a redirect may carry the Hub token.
    const std::string public_host = host_of(s.public_url);
    const std::string other = public_host == "localhost" ? "127.0.0.1" : "localhost";
    s.storage_url = "http://" + other + ":" + port;
  }
  while (s.storage_url.ends_with('/')) s.storage_url.pop_back();
  s.running = true;
  s.thread = std::thread([&s] {
    s.http.listen_after_bind();
    s.listen_returned = true;
  });
  // Back only once it accepts: cpp-httplib's stop() does nothing to a server whose listen loop has
  // not started yet, which would then accept forever and stop() would never return (a SIGTERM
  // right after the URL was printed hung `kernelhub serve`).
  while (!s.http.is_running() && !s.listen_returned) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return {};
}

void Server::stop() {
  Impl& s = *impl_;
  if (!s.running.exchange(false)) return;
  s.http.stop();
  if (s.thread.joinable()) s.thread.join();
}

void Server::wait() {
  Impl& s = *impl_;
  while (s.running && !s.http.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  while (s.running && s.http.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
}

int Server::port() const {
  return impl_->port;
}
std::string Server::public_url() const {
  return impl_->public_url;
}
std::string Server::storage_url() const {
  return impl_->storage_url;
}

std::string Server::Impl::repo_url(const RepoKey& key) const {
  return public_url + "/" + std::string(url_prefix(key.type)) + key.id();
}

std::string Server::Impl::api_base(const RepoKey& key) const {
  return public_url + "/api/" + std::string(api_segment(key.type)) + "/" + key.id();
}

std::string Server::Impl::sign(std::string_view message) const {
  return hmac_hex(store->secret(), message);
}

bool Server::Impl::check_signature(Call& call, std::string_view message) {
  if (call.query_value("sig") == sign(message)) return true;
  send_error(call.res, 403, "InvalidSignature",
             "this storage URL is not signed for this object; ask the Hub API for a fresh URL");
  return false;
}

void Server::Impl::install_routes() {
  // httplib owns and deletes the queue it is handed; this is its API, not our ownership model.
  const std::size_t threads = options.threads;
  http.new_task_queue = [threads] { return std::make_unique<httplib::ThreadPool>(threads).release(); };
  http.set_keep_alive_max_count(100000);
  // Idle keep-alive connections hold a worker each, and stop() waits for them to time out (httplib
  // checks for a stop only between requests): 2 s, as gunicorn's default, keeps a client's burst of
  // requests on one connection and lets `kernelhub serve` stop within 2 s of a signal (10 s before).
  http.set_keep_alive_timeout(2);
  http.set_read_timeout(60);
  http.set_write_timeout(60);
  http.set_tcp_nodelay(true);
  // Per-route limits are enforced while reading (see dispatch); this is the outer bound.
  http.set_payload_max_length(static_cast<std::size_t>(options.max_lfs_object_bytes));

  http.set_pre_routing_handler([this](const httplib::Request& req,
                                      httplib::Response& res) -> httplib::Server::HandlerResponse {
    // Refuse oversized bodies before a byte of them is read.
    const bool is_upload = req.target.starts_with("/lfs-upload/") || req.target.starts_with("/lfs-part/");
    const std::uint64_t limit = is_streamed_commit(req) ? options.max_commit_body_bytes : options.max_body_bytes;
    if (!is_upload && req.has_header("Content-Length")) {
      const std::string value = req.get_header_value("Content-Length");
      const auto length = std::strtoull(value.c_str(), nullptr, 10);
      if (length > limit) {
        res.set_header("Connection", "close");
        send_error(
            res, 413, "PayloadTooLarge",
            "request body of " + value + " bytes is over this server's limit of " + std::to_string(limit) + " bytes");
        drop_ranges_unless_file(req, res);
        set_request_id(req, res);
        return httplib::Server::HandlerResponse::Handled;
      }
    }
    if ((req.method == "GET" || req.method == "HEAD") && req.has_header("Transfer-Encoding")) {
      res.set_header("Connection", "close");
      send_error(res, 400, "BadRequest", "GET and HEAD requests must not carry a body");
      drop_ranges_unless_file(req, res);
      set_request_id(req, res);
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  http.set_error_handler(httplib::Server::HandlerWithResponse([](const httplib::Request& req, httplib::Response& res) {
    set_request_id(req, res);
    if (res.has_header("X-Error-Message")) return httplib::Server::HandlerResponse::Unhandled;
    if (res.status == 413) {
      send_error(res, 413, "PayloadTooLarge", "request body is over this server's limit");
    } else if (res.status == 416) {
      send_error(res, 416, "RangeNotSatisfiable", "requested range is outside the file");
    } else if (res.status == 414) {
      send_error(res, 414, "UriTooLong", "the request URL is longer than this server accepts; shorten the path");
    } else if (res.status == 404) {
      send_error(res, 404, {}, "Sorry, we can't find the page you are looking for: " + req.method + " " + req.path);
    } else {
      send_error(res, res.status, "BadRequest",
                 "the request could not be understood (HTTP " + std::to_string(res.status) + ")");
    }
    return httplib::Server::HandlerResponse::Handled;
  }));
  http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown error";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    send_error(res, 500, "InternalError", "internal server error: " + what);
  });
  if (options.log_requests) {
    http.set_logger([](const httplib::Request& req, const httplib::Response& res) {
      std::fprintf(stderr, "%s %s %d range=%s id=%s\n", req.method.c_str(), req.target.c_str(), res.status,
                   req.get_header_value("Range").c_str(), res.get_header_value("X-Request-Id").c_str());
    });
  }
  auto plain = [this](const httplib::Request& req, httplib::Response& res) { dispatch(req, res, nullptr); };
  auto with_body = [this](const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& r) {
    dispatch(req, res, &r);
  };
  http.Get(".*", plain);  // also serves HEAD (httplib routes HEAD to GET handlers, without the body)
  http.Options(".*", plain);
  http.Post(".*", with_body);
  http.Put(".*", with_body);
  http.Patch(".*", with_body);
  http.Delete(".*", with_body);
}

// Note [Ranges only for files]: httplib applies a request's Range to whatever body we send,
// errors and redirects included. Only file bodies leave the status unset (httplib then picks
// 200/206); for every other answer the ranges are dropped so the body goes out whole. httplib owns
// the Request as a non-const local, so clearing it here is well-defined.
void drop_ranges_unless_file(const httplib::Request& req, const httplib::Response& res) {
  if (res.status != -1) const_cast<httplib::Request&>(req).ranges.clear();
}

void Server::Impl::dispatch(const httplib::Request& req, httplib::Response& res, const httplib::ContentReader* reader) {
  set_request_id(req, res);
  route(req, res, reader);
  answer_conditionally(req, res);
  // A streamed commit refused before (or while) its body was read leaves bytes on the connection.
  if (res.status != 200 && reader && is_streamed_commit(req)) res.set_header("Connection", "close");
  drop_ranges_unless_file(req, res);
}

namespace {

bool is_get(const Call& call) {
  return call.req.method == "GET" || call.req.method == "HEAD";
}

// 404 in the Hub's words, for a path no route serves.
void not_found(Call& call) {
  send_error(call.res, 404, {},
             "Sorry, we can't find the page you are looking for: " + call.req.method + " " +
                 std::string(split_target(call.req.target).path));
}

// Reads a request body into `call.body`, up to `limit` bytes; false once an error was answered
// (413 closes the connection: the rest of the body is still on it).
bool read_body(Call& call, const httplib::ContentReader& reader, std::size_t limit) {
  bool too_big = false;
  const bool ok = reader([&](const char* data, std::size_t size) {
    if (call.body.size() + size > limit) {
      too_big = true;
      return false;
    }
    call.body.append(data, size);
    return true;
  });
  if (too_big) {
    call.res.set_header("Connection", "close");
    send_error(call.res, 413, "PayloadTooLarge",
               "request body is over this server's limit of " + std::to_string(limit) + " bytes");
    return false;
  }
  if (!ok) send_error(call.res, 400, "BadRequest", "the request body could not be read completely");
  return ok;
}

// The caller a Bearer token names (none without an Authorization header); false once 401 was
// answered for a token that is unknown or expired.
bool identify_caller(Call& call, const AccessPolicy& policy) {
  if (!call.req.has_header("Authorization")) return true;
  const std::string auth = call.req.get_header_value("Authorization");
  if (auth.size() > 7 && (auth.starts_with("Bearer ") || auth.starts_with("bearer "))) {
    call.who = policy.find(std::string_view(auth).substr(7));
  }
  if (call.who == nullptr) {
    send_error(call.res, 401, "Unauthorized", "Invalid credentials in Authorization header");
    return false;
  }
  if (call.who->expires_at && std::time(nullptr) >= *call.who->expires_at) {
    send_error(
        call.res, 401, "Unauthorized",
        "Your token expired at Unix time " + std::to_string(*call.who->expires_at) + "; create a new access token");
    return false;
  }
  return true;
}

}  // namespace

void Server::Impl::route(const httplib::Request& req, httplib::Response& res, const httplib::ContentReader* reader) {
  Call call{req, res, {}, {}, nullptr, {}};
  const Target target = split_target(req.target);
  auto segs = decode_segments(target.path);
  auto query = parse_form(target.query);
  if (!segs || !query) {
    send_error(res, 400, "BadRequest", "malformed percent-encoding in the request URL");
    return;
  }
  call.segs = std::move(*segs);
  call.query = std::move(*query);
  const auto& s = call.segs;
  const std::string& m = req.method;
  if (s.empty()) return not_found(call);

  // Storage host routes: authorized by their URL signature, never by the Hub token.
  if (s[0] == "lfs-storage" && s.size() == 2 && is_get(call)) return storage_get(call, s[1]);
  if (s[0] == "lfs-upload" && s.size() == 2 && m == "PUT" && reader) return lfs_upload(call, *reader, s[1]);
  if (s[0] == "lfs-part" && s.size() == 3 && m == "PUT" && reader) return lfs_upload_part(call, *reader, s[1], s[2]);

  if (reader && is_streamed_commit(req)) {
    call.streamed_body = reader;
  } else if (reader && !read_body(call, *reader, options.max_body_bytes)) {
    return;
  }
  // Hub routes: identify the caller. The body was read first, so a refusal leaves the
  // keep-alive connection clean for the next request.
  if (!identify_caller(call, policy)) return;

  if (s[0] == "lfs-complete" && s.size() == 2 && m == "POST") return lfs_complete(call, s[1]);
  if (s[0] == "api") return route_api(call);
  return route_web(call);
}

void Server::Impl::route_api(Call& call) {
  const auto& s = call.segs;
  const std::string& m = call.req.method;
  const bool get = is_get(call);
  if (s.size() == 2 && s[1] == "whoami-v2" && get) return whoami(call);
  if (s.size() == 4 && s[1] == "organizations" && s[3] == "overview" && get) return organization_overview(call, s[2]);
  if (s.size() == 2 && s[1] == "agent-harnesses" && get) return agent_harnesses(call);
  if (s.size() == 3 && s[1] == "settings" && s[2] == "repositories" && get) return repository_storage(call, "");
  if (s.size() == 5 && s[1] == "organizations" && s[3] == "settings" && s[4] == "repositories" && get) {
    return repository_storage(call, s[2]);
  }
  if (s.size() == 3 && s[1] == "repos" && s[2] == "create" && m == "POST") return create_repo(call);
  if (s.size() == 2 && s[1] == "validate-yaml" && m == "POST") return validate_yaml(call);
  if (s.size() == 3 && s[1] == "repos" && s[2] == "delete" && m == "DELETE") return delete_repo(call);
  if (s.size() == 3 && s[1] == "repos" && s[2] == "move" && m == "POST") return move_repo(call);
  const auto type = repo_type_from_api_segment(s[1]);
  if (s.size() == 2 && type && get) return list_repos(call, *type);
  if (s.size() < 3 || !type) return not_found(call);
  // /api/{T}s/{id}/…: the id is one segment, or two when the second is not a route's own word.
  std::size_t sub = 3;
  std::string id = s[2];
  if (s.size() >= 4 && !is_api_subroute(s[3])) {
    id += "/" + s[3];
    sub = 4;
  }
  auto parsed = parse_repo_key(*type, id);
  if (!parsed) return send_error(call.res, 400, "BadRequest", parsed.error().message);
  return route_repo_api(call, canonical(std::move(*parsed)), sub);
}

void Server::Impl::route_repo_api(Call& call, const RepoKey& key, std::size_t sub) {
  const auto& s = call.segs;
  const std::string& m = call.req.method;
  const bool get = is_get(call);
  const std::size_t n = s.size() - sub;
  const std::string verb = n > 0 ? s[sub] : "";
  if (n == 0 && get) return repo_info(call, key, "main");
  if (verb == "revision" && n >= 2 && get) return repo_info(call, key, join(s, sub + 1));
  if (verb == "tree" && n >= 2 && get) return tree(call, key, s[sub + 1], join(s, sub + 2));
  if (verb == "paths-info" && n >= 2 && m == "POST") return paths_info(call, key, join(s, sub + 1));
  if (verb == "refs" && n == 1 && get) return refs(call, key);
  if (verb == "commits" && n >= 2 && get) return commits(call, key, join(s, sub + 1));
  if (verb == "preupload" && n >= 2 && m == "POST") return preupload(call, key, join(s, sub + 1));
  if (verb == "commit" && n >= 2 && m == "POST") return commit(call, key, join(s, sub + 1));
  if (verb == "branch" && n >= 2 && m == "POST") return create_branch(call, key, join(s, sub + 1));
  if (verb == "branch" && n >= 2 && m == "DELETE") {
    return delete_ref(call, key, Store::RefKind::kBranch, join(s, sub + 1));
  }
  if (verb == "tag" && n >= 2 && m == "POST") return create_tag(call, key, join(s, sub + 1));
  if (verb == "tag" && n >= 2 && m == "DELETE") return delete_ref(call, key, Store::RefKind::kTag, join(s, sub + 1));
  if (verb == "settings" && n == 1 && m == "PUT") return update_settings(call, key);
  if (verb == "auth-check" && n <= 2 && get && (n == 1 || s[sub + 1] == "write")) {
    return auth_check(call, key, n == 2);
  }
  if (verb == "super-squash" && n >= 2 && m == "POST") return super_squash(call, key, join(s, sub + 1));
  if (verb == "lfs-files" && n == 1 && get) return list_lfs_files(call, key);
  if (verb == "lfs-files" && n == 2 && s[sub + 1] == "batch" && m == "POST") return delete_lfs_files(call, key);
  if (verb == "user-access-request" && n == 2) {
    if (get) return list_access_requests(call, key, s[sub + 1]);
    if (m == "POST" && (s[sub + 1] == "handle" || s[sub + 1] == "grant")) {
      return handle_access_request(call, key, s[sub + 1] == "grant");
    }
  }
  if (verb == "discussions" && n == 1 && get) return list_discussions(call, key);
  if (verb == "discussions" && n == 1 && m == "POST") return create_discussion(call, key);
  if (verb == "discussions" && n == 2 && get) return discussion_details(call, key, s[sub + 1]);
  return not_found(call);
}

// Web routes: [{datasets|spaces|kernels}/]{id}/resolve/{rev}/{path} and {id}.git/info/lfs/…
void Server::Impl::route_web(Call& call) {
  const auto& s = call.segs;
  RepoType type = RepoType::kModel;
  std::size_t off = 0;
  if (const auto prefixed = repo_type_from_api_segment(s[0]); prefixed && *prefixed != RepoType::kModel) {
    type = *prefixed;
    off = 1;
  }
  for (std::size_t width : {std::size_t{2}, std::size_t{1}}) {
    if (s.size() < off + width + 1) continue;
    std::string id = width == 2 ? s[off] + "/" + s[off + 1] : s[off];
    const std::size_t k = off + width;
    if (s[k] == "resolve" && s.size() >= k + 3 && is_get(call)) {
      auto key = parse_repo_key(type, id);
      if (!key) return send_error(call.res, 400, "BadRequest", key.error().message);
      return resolve_file(call, canonical(std::move(*key)), s[k + 1], join(s, k + 2));
    }
    if (id.ends_with(".git") && s.size() == k + 4 && s[k] == "info" && s[k + 1] == "lfs" && s[k + 2] == "objects" &&
        call.req.method == "POST") {
      auto key = parse_repo_key(type, id.substr(0, id.size() - 4));
      if (!key) return send_error(call.res, 400, "BadRequest", key.error().message);
      if (s[k + 3] == "batch") return lfs_batch(call, canonical(std::move(*key)));
      if (s[k + 3] == "verify") return lfs_verify(call, canonical(std::move(*key)));
    }
  }
  return not_found(call);
}

std::shared_ptr<const RepoState> Server::Impl::readable_repo(Call& call, const RepoKey& key) {
  auto repo = store->repo(key);
  if (repo && (!repo->meta.is_private || AccessPolicy::owns(call.who, key.ns))) return repo;
  // Missing and private-to-someone-else look the same, as on the Hub: 401 for anonymous callers
  // (who might see it after logging in), 404 otherwise.
  // The Hub's own words: huggingface_hub writes the URL and the advice around them itself.
  const std::string message = "Repository not found";
  send_error(call.res, call.who ? 404 : 401, "RepoNotFound", message);
  return nullptr;
}

RepoKey Server::Impl::canonical(RepoKey key) const {
  // A few hops at most: a repo renamed twice is found; a cycle of renames cannot loop.
  for (int hop = 0; hop < 8; ++hop) {
    if (store->repo(key)) return key;
    if (auto other = store->repo_ignoring_case(key)) return other->key;
    auto moved = store->moved_to(key);
    if (!moved) break;
    key = *moved;
  }
  return key;
}

std::shared_ptr<const RepoState> Server::Impl::contributable_repo(Call& call, const RepoKey& key) {
  auto repo = readable_repo(call, key);
  if (!repo) return nullptr;
  if (call.who == nullptr) {
    send_error(call.res, 401, "Unauthorized",
               "You must be authenticated to open a pull request on " + key.id() + "; pass a token with write access");
    return nullptr;
  }
  if (!call.who->write) {
    send_error(call.res, 403, "Forbidden",
               "Your token (user `" + call.who->user + "`) is read-only; opening a pull request needs a write token");
    return nullptr;
  }
  return repo;
}

std::shared_ptr<const RepoState> Server::Impl::writable_repo(Call& call, const RepoKey& key) {
  auto repo = readable_repo(call, key);
  if (!repo) return nullptr;
  if (call.who == nullptr) {
    send_error(call.res, 401, "Unauthorized",
               "You must be authenticated to write to " + key.id() + "; pass a token with write access");
    return nullptr;
  }
  if (!call.who->write || !AccessPolicy::owns(call.who, key.ns)) {
    send_error(call.res, 403, "Forbidden",
               "Your token (user `" + call.who->user + "`) has no write access to " + std::string(to_string(key.type)) +
                   " repo " + key.id());
    return nullptr;
  }
  return repo;
}

bool Server::Impl::check_gate(Call& call, const RepoState& repo) {
  if (repo.meta.gated.empty() || AccessPolicy::owns(call.who, repo.key.ns)) return true;
  if (call.who) {
    for (const auto& user : repo.meta.gated_access) {
      if (user == call.who->user) return true;
    }
    for (const auto& request : repo.meta.access_requests) {
      if (request.user == call.who->user && request.status == "accepted") return true;
    }
    send_error(call.res, 403, "GatedRepo",
               "Access to " + std::string(to_string(repo.key.type)) + " " + repo.key.id() +
                   " is restricted and you are not in the authorized list. Visit " + repo_url(repo.key) +
                   " to ask for access.");
  } else {
    send_error(call.res, 401, "GatedRepo",
               "Access to " + std::string(to_string(repo.key.type)) + " " + repo.key.id() +
                   " is restricted. You must have access to it and be authenticated to access it. Please log in.");
  }
  return false;
}

std::shared_ptr<const Commit> Server::Impl::commit_at(Call& call, const RepoState& repo, const std::string& revision) {
  const auto id = store->resolve(repo, revision);
  if (id) {
    auto c = store->commit(repo.key, *id);
    if (c) return *c;
    send_error(call.res, 500, "InternalError", c.error().message);
    return nullptr;
  }
  send_error(call.res, 404, "RevisionNotFound",
             "Invalid rev id: " + revision + " (no branch, tag or commit of " + repo.key.id() + " has that name)");
  return nullptr;
}

json file_entry_json(const std::string& path, const FileEntry& entry) {
  json j = {{"type", "file"}, {"oid", entry.git_sha1}, {"size", entry.size}, {"path", path}};
  if (entry.lfs) {
    j["lfs"] = {{"oid", entry.sha256},
                {"size", entry.size},
                {"pointerSize", lfs_pointer_text(entry.sha256, entry.size).size()}};
  }
  return j;
}

std::string lfs_pointer_text(std::string_view sha256, std::uint64_t size) {
  return "version https://git-lfs.github.com/spec/v1\noid sha256:" + std::string(sha256) + "\nsize " +
         std::to_string(size) + "\n";
}

}  // namespace kernelhub::server
