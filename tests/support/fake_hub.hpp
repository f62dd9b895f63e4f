// FakeHub: the tests' one stand-in Hub, on loopback (cpp-httplib), with a storage host on another
// address (127.0.0.2) for LFS files and injected faults, down to a Hub that accepts and never
// answers. It speaks the minimum of the Hub protocol a client needs; tests of the protocol itself
// run against `kernelhub serve` (tests/server/test_hub.hpp, tests/python/conftest.py).
#pragma once

#include <httplib.h>

#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace kernelhub::testing {

struct FakeFile {
  std::string path;
  std::string content;
  bool lfs = false;
};

struct Faults {
  std::vector<int> statuses;          // the next file GETs answer these statuses, in order
  int retry_after_s = -1;             // with a 429 in `statuses`: its Retry-After
  int resets = 0;                     // the next N file GETs cut the connection...
  std::size_t reset_after = 100000;   // ...after this many body bytes
  int slow = 0;                       // the next N file GETs stall...
  int slow_ms = 0;                    // ...this long before the body
  bool short_body_always = false;     // every file GET sends half of its Content-Length
  int flips = 0;                      // the next N file GETs flip one byte
  bool redirect_loop = false;         // every resolve answers 302 to itself
  bool cross_host_regular = false;    // regular files too are redirected to the storage host
  int api_hops = 0;                   // the next N API GETs answer 307 to a hop that redirects back...
  bool api_hops_via_storage = false;  // ...on the storage host instead of the Hub
  bool silent = false;                // both hosts read every request and never answer (a hung Hub)
};

struct SeenRequest {
  std::string host;  // "hub" or "storage"
  std::string method;
  std::string path;
  std::string authorization;
  std::string range;  // the Range header, if any
};

class FakeHub {
 public:
  FakeHub();
  ~FakeHub();

  // A kernel repo "org/kern" with one commit; refs main, v1, v2 and tag t1 point at it.
  void add_kernel(const std::string& repo, std::vector<FakeFile> files);
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(hub_port_); }
  std::string commit(const std::string& repo) const;
  std::string storage_host() const { return "127.0.0.2:" + std::to_string(storage_port_); }

  void set_faults(Faults faults);
  void set_page_size(std::size_t n) { page_size_ = n; }
  void require_token(std::string token) { required_token_ = std::move(token); }
  std::vector<SeenRequest> requests() const;
  int count(const std::string& host, const std::string& method = "") const;
  void clear_requests();

 private:
  struct Repo {
    std::string commit;
    std::vector<FakeFile> files;  // sorted
    std::map<std::string, std::string> refs;
  };
  const Repo* find_repo(const std::string& repo) const;
  const FakeFile* find_blob(const std::string& sha256) const;
  // Faults::silent: holds the request until the faults change or the hub stops.
  void hold_if_silent();
  void record(const std::string& host, const httplib::Request& req);
  void serve_bytes(const httplib::Request& req, httplib::Response& res, const std::string& content);
  // Faults::api_hops: true when this API GET was answered with a redirect.
  bool redirect_api(const httplib::Request& req, httplib::Response& res);

  httplib::Server hub_;
  httplib::Server storage_;
  std::thread hub_thread_;
  std::thread storage_thread_;
  int hub_port_ = 0;
  int storage_port_ = 0;
  std::size_t page_size_ = 2;
  std::string required_token_;
  mutable std::mutex mutex_;
  std::condition_variable faults_changed_;
  bool stopping_ = false;
  std::map<std::string, Repo> repos_;
  Faults faults_;
  std::vector<SeenRequest> seen_;
};

std::string sha256_hex(const std::string& content);

}  // namespace kernelhub::testing
