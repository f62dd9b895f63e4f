// Transport: the seam between the Hub client and HTTP. A request goes out, the response head and
// a streamed body come back to a BodySink; many requests can run at once through run(), which
// pulls work from a Workload until it says it is done. The real transport is libcurl (easy
// handles on a multi handle, see make_curl_transport); tests give the Hub client their own
// transport to count or break requests.
//
// Transport never follows redirects and never retries: policy (redirects, retries, resume,
// tokens) lives in the Hub client, so it is the same whatever the transport is.
//
// Thread safety: a Transport may be used by several threads at once; each run() call is
// independent. A Workload and its sinks are used by the thread that called run() only.
// Ownership: sinks are owned by the caller and must outlive the request they are given with.
// Errors: a request that got no complete response (connect failure, reset, timeout, sink abort)
// finishes with kNetwork; HTTP error statuses are Responses, not errors.
// Touches the network (only the URLs it is given).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "kernelhub/base/result.hpp"

namespace kernelhub::client {

struct Header {
  std::string name;  // lower-case in responses
  std::string value;
};

// A byte range of a local file sent as a request body (LFS uploads stream from disk).
struct FileSlice {
  std::filesystem::path path;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
};

struct Request {
  std::string method = "GET";  // GET, HEAD, or POST/PUT/DELETE with a body
  std::string url;
  std::vector<Header> headers;
  std::string body;                    // sent when non-empty (or when method is POST/PUT)
  std::optional<FileSlice> body_file;  // sent instead of `body` when set
  std::chrono::milliseconds connect_timeout{10'000};
  std::chrono::milliseconds read_timeout{10'000};  // fail when no byte arrives for this long (1 s granularity)
};

struct Response {
  int status = 0;
  std::vector<Header> headers;  // lower-case names, in arrival order

  // The last value of `name` (lower-case), or nullptr.
  const std::string* header(std::string_view name) const;
};

// Receives a response body as it streams in.
class BodySink {
 public:
  virtual ~BodySink() = default;
  // Called once before the first body byte. Returning false aborts the transfer.
  virtual bool begin(int status, const std::vector<Header>& headers) = 0;
  // Body bytes in order. Returning false aborts the transfer.
  virtual bool write(const char* data, std::size_t size) = 0;
};

// Collects a body in memory, up to `limit` bytes (more aborts the transfer).
class StringSink final : public BodySink {
 public:
  explicit StringSink(std::size_t limit = 64u << 20) : limit_(limit) {}
  bool begin(int, const std::vector<Header>&) override {
    body_.clear();
    return true;
  }
  bool write(const char* data, std::size_t size) override {
    if (body_.size() + size > limit_) return false;
    body_.append(data, size);
    return true;
  }
  const std::string& body() const { return body_; }
  std::string take() { return std::move(body_); }

 private:
  std::size_t limit_;
  std::string body_;
};

// The caller's queue of requests for Transport::run.
class Workload {
 public:
  struct Item {
    std::uint64_t id = 0;
    Request request;
    BodySink* sink = nullptr;  // not owned; valid until finished(id, ...)
  };
  virtual ~Workload() = default;
  // The next request to start now, or nullopt if none is ready (yet).
  virtual std::optional<Item> next() = 0;
  // A started request ended: a Response, or kNetwork.
  virtual void finished(std::uint64_t id, Result<Response> result) = 0;
  // True when no request will come any more; run() returns once this holds and none is in flight.
  virtual bool done() const = 0;
  // What run() does when nothing is in flight and next() had nothing (a backoff wait): sleeps a
  // little, on the real clock unless the workload has a clock of its own (base/clock.hpp).
  virtual void wait_idle() { std::this_thread::sleep_for(std::chrono::milliseconds(10)); }
};

class Transport {
 public:
  virtual ~Transport() = default;
  // Runs `work` with at most `max_parallel` requests in flight. Returns when work.done() and
  // nothing is in flight. REQUIRES: max_parallel >= 1.
  virtual void run(Workload& work, int max_parallel) = 0;

  // One request on the calling thread (built on run()).
  Result<Response> perform(const Request& request, BodySink& sink);

  // The TCP connections this transport has opened so far (a reused one counts once); 0 where the
  // transport cannot tell.
  virtual std::uint64_t connections_opened() const { return 0; }
};

// libcurl: one multi handle per concurrent run() (pooled, so connections are reused across
// calls), no redirects followed, proxies as libcurl reads them from the environment. A process
// forked from the one that made it opens connections of its own.
std::shared_ptr<Transport> make_curl_transport();

}  // namespace kernelhub::client
