// An in-process `kernelhub serve` on a free loopback port, with two tokens, and small helpers
// to talk to it the way huggingface_hub does.
#pragma once

#include <httplib.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "kernelhub/base/internal/base64.hpp"
#include "kernelhub/base/internal/sha256.hpp"
#include "kernelhub/server/internal/server.hpp"
#include "temp_dir.hpp"

namespace kernelhub::server::testing {

inline constexpr const char* kWriteToken = "hf_write_alice";
inline constexpr const char* kReadToken = "hf_read_bob";

class TestHub {
 public:
  explicit TestHub(ServerOptions options = {}) {
    std::ofstream(dir_.path() / "tokens.json")
        << R"({"tokens": {")" << kWriteToken << R"(": {"user": "alice", "orgs": ["acme"], "write": true}, ")"
        << kReadToken << R"(": {"user": "bob", "write": false}},
               "organizations": {"acme": {"fullname": "Acme Kernels", "trustedKernelPublisher": true}}})";
    options.root = dir_.path() / "root";
    options.tokens_file = dir_.path() / "tokens.json";
    options.threads = 8;
    options_ = options;
    start();
  }

  // Stops the server and starts a new one over the same root: what a restart would serve.
  void restart() {
    client_.reset();
    server_.reset();
    start();
  }

  Server& server() { return *server_; }
  httplib::Client& client() { return *client_; }
  std::filesystem::path root() const { return dir_.path() / "root"; }
  std::filesystem::path outside() const { return dir_.path(); }

  static httplib::Headers auth(const char* token = kWriteToken) {
    return {{"Authorization", std::string("Bearer ") + token}};
  }

  // POST /api/repos/create; returns the status.
  int create_repo(const std::string& name, const std::string& type, bool is_private = false) {
    nlohmann::json body = {{"name", name}, {"organization", "acme"}, {"private", is_private}};
    if (!type.empty()) body["type"] = type;
    auto res = client_->Post("/api/repos/create", auth(), body.dump(), "application/json");
    REQUIRE(res);
    return res->status;
  }

  // NDJSON commit; returns the response.
  httplib::Result commit(const std::string& api_repo, const std::vector<nlohmann::json>& lines,
                         const std::string& revision = "main", const char* token = kWriteToken) {
    std::string body;
    for (const auto& l : lines) body += l.dump() + "\n";
    return client_->Post(("/api/" + api_repo + "/commit/" + revision).c_str(), auth(token), body,
                         "application/x-ndjson");
  }

  static nlohmann::json header_line(const std::string& summary = "test commit") {
    return {{"key", "header"}, {"value", {{"summary", summary}, {"description", ""}}}};
  }
  static nlohmann::json file_line(const std::string& path, const std::string& content) {
    return {{"key", "file"}, {"value", {{"path", path}, {"content", base64_encode(content)}, {"encoding", "base64"}}}};
  }

  std::string head(const std::string& api_repo, const std::string& branch = "main") {
    auto res = client_->Get(("/api/" + api_repo + "/refs").c_str(), auth());
    REQUIRE(res);
    const auto refs = nlohmann::json::parse(res->body);
    for (const auto& b : refs["branches"]) {
      if (b["name"] == branch) return b["targetCommit"].get<std::string>();
    }
    return {};
  }

  // A client for the storage host URL (another host name, same port).
  std::unique_ptr<httplib::Client> storage_client() const {
    return std::make_unique<httplib::Client>(server_->storage_url());
  }

 private:
  void start() {
    auto server = Server::create(options_);
    REQUIRE(server);
    server_ = std::move(*server);
    REQUIRE(server_->start());
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
    client_->set_keep_alive(true);
  }

  TempDir dir_;
  ServerOptions options_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<httplib::Client> client_;
};

// Splits an absolute URL into (scheme://host:port, path?query).
inline std::pair<std::string, std::string> split_url(const std::string& url) {
  const auto slash = url.find('/', url.find("://") + 3);
  return {url.substr(0, slash), url.substr(slash)};
}

}  // namespace kernelhub::server::testing
