// The libcurl Transport: easy handles driven by a multi handle. RAII owns every curl object.
#include <curl/curl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <map>
#include <mutex>
#include <thread>

#include "kernelhub/base/internal/unique_file.hpp"
#include "kernelhub/client/internal/transport.hpp"

namespace kernelhub::client {

namespace {

struct EasyDeleter {
  void operator()(CURL* easy) const { curl_easy_cleanup(easy); }
};
struct MultiDeleter {
  void operator()(CURLM* multi) const { curl_multi_cleanup(multi); }
};
struct SlistDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};
using EasyHandle = std::unique_ptr<CURL, EasyDeleter>;
using MultiHandle = std::unique_ptr<CURLM, MultiDeleter>;
using HeaderList = std::unique_ptr<curl_slist, SlistDeleter>;

// libcurl's global state is the process's: initialised once, whatever the number of transports,
// when the first request goes out (it starts OpenSSL: a load from the cache alone never needs it).
void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// One request in flight.
struct Transfer {
  std::uint64_t id = 0;
  BodySink* sink = nullptr;
  EasyHandle easy;
  HeaderList headers;
  std::string url;
  std::string body;             // request body (kept alive for libcurl)
  UniqueFile body_file;         // or a file slice, read by on_read
  std::uint64_t body_left = 0;  // bytes of the slice still to send
  Response response;
  bool began = false;
  bool sink_refused = false;
  std::size_t body_bytes = 0;
  char error[CURL_ERROR_SIZE] = {};
};

std::string trim(std::string_view text) {
  while (!text.empty() && (text.back() == '\r' || text.back() == '\n' || text.back() == ' ' || text.back() == '\t')) {
    text.remove_suffix(1);
  }
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  return std::string(text);
}

size_t on_header(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::string_view line(data, size * count);
  if (line.starts_with("HTTP/")) {
    // A new response (e.g. after 100 Continue): start over.
    t->response.headers.clear();
    const auto space = line.find(' ');
    if (space != std::string_view::npos) t->response.status = std::atoi(std::string(line.substr(space + 1, 3)).c_str());
    return size * count;
  }
  const auto colon = line.find(':');
  if (colon != std::string_view::npos) {
    std::string name(line.substr(0, colon));
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    t->response.headers.push_back(Header{std::move(name), trim(line.substr(colon + 1))});
  }
  return size * count;
}

size_t on_body(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t n = size * count;
  if (!t->began) {
    t->began = true;
    if (!t->sink->begin(t->response.status, t->response.headers)) {
      t->sink_refused = true;
      return 0;
    }
  }
  if (n == 0) return 0;
  if (!t->sink->write(data, n)) {
    t->sink_refused = true;
    return 0;
  }
  t->body_bytes += n;
  return n;
}

size_t on_read(char* buffer, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::uint64_t want = std::min<std::uint64_t>(t->body_left, size * count);
  if (want == 0) return 0;
  const size_t n = std::fread(buffer, 1, static_cast<size_t>(want), t->body_file.get());
  if (n == 0) return CURL_READFUNC_ABORT;  // the file shrank under us
  t->body_left -= n;
  return n;
}

std::string redact_query(const std::string& url) {
  // Signed storage URLs carry credentials in the query: never print it.
  const auto q = url.find('?');
  return q == std::string::npos ? url : url.substr(0, q) + "?…";
}

std::unique_ptr<Transfer> make_transfer(Workload::Item item) {
  auto t = std::make_unique<Transfer>();
  t->id = item.id;
  t->sink = item.sink;
  t->url = item.request.url;
  t->easy.reset(curl_easy_init());
  CURL* e = t->easy.get();
  curl_slist* list = nullptr;
  for (const Header& h : item.request.headers) list = curl_slist_append(list, (h.name + ": " + h.value).c_str());
  // Send bodies at once: no "Expect: 100-continue" round trip.
  if (item.request.body_file || !item.request.body.empty()) list = curl_slist_append(list, "Expect:");
  // No "Expect:" games, no transparent decoding: we ask for identity and check sizes exactly.
  t->headers.reset(list);
  curl_easy_setopt(e, CURLOPT_URL, t->url.c_str());
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, list);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
  // HTTP(S) only: the client follows Location values a server chose, and one naming file://,
  // ftp:// or another protocol libcurl speaks must not make us read local files or talk it.
#if LIBCURL_VERSION_NUM >= 0x075500
  curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
#else
  curl_easy_setopt(e, CURLOPT_PROTOCOLS, static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &on_header);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, t.get());
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &on_body);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, t.get());
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t->error);
  curl_easy_setopt(e, CURLOPT_BUFFERSIZE, 512L * 1024L);
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(item.request.connect_timeout.count()));
  // Read timeout: abort when fewer than 1 byte/s arrive for that many seconds.
  const long read_s = std::max<long>(1, static_cast<long>((item.request.read_timeout.count() + 999) / 1000));
  curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, read_s);
  const std::string& method = item.request.method;
  if (method == "HEAD") {
    curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
  } else if (item.request.body_file) {
    // Streamed from disk. A file that cannot be opened sends nothing; the server then answers
    // a size mismatch, which the caller reports.
    const FileSlice& slice = *item.request.body_file;
    t->body_file = open_file(slice.path, "rb");
    if (t->body_file && slice.offset > 0) {
      ::fseeko(t->body_file.get(), static_cast<off_t>(slice.offset), SEEK_SET);
    }
    t->body_left = t->body_file ? slice.length : 0;
    curl_easy_setopt(e, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(e, CURLOPT_READFUNCTION, &on_read);
    curl_easy_setopt(e, CURLOPT_READDATA, t.get());
    curl_easy_setopt(e, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(slice.length));
    if (method != "PUT") curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, method.c_str());
  } else if (method != "GET") {
    if (method == "POST" || method == "PUT" || !item.request.body.empty()) {
      t->body = item.request.body;
      curl_easy_setopt(e, CURLOPT_POSTFIELDS, t->body.data());
      curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(t->body.size()));
    }
    curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, method.c_str());
  }
  curl_easy_setopt(e, CURLOPT_PRIVATE, t.get());
  return t;
}

// How a transfer that ended in `code` failed (error.hpp NetworkFailure). A TLS certificate that does
// not verify is a host that cannot be reached. A timeout before the
// request went out is a host that cannot be reached (a connect timeout); one after it, before any
// response head, is a host that does not answer; anything once a head arrived is a cut.
NetworkFailure failure_kind(const Transfer& t, CURLcode code) {
  if (code == CURLE_COULDNT_RESOLVE_HOST || code == CURLE_COULDNT_RESOLVE_PROXY || code == CURLE_COULDNT_CONNECT) {
    return NetworkFailure::kUnreachable;
  }
  // A certificate nothing here vouches for will not be vouched for on a retry either: the host
  // cannot be reached safely, and is not asked again.
  if (code == CURLE_PEER_FAILED_VERIFICATION || code == CURLE_SSL_CACERT_BADFILE || code == CURLE_SSL_CERTPROBLEM) {
    return NetworkFailure::kUnreachable;
  }
  if (code == CURLE_OPERATION_TIMEDOUT && t.response.status == 0) {
    curl_off_t sent_at = 0;  // microseconds until the request was about to go out; 0: never
    curl_easy_getinfo(t.easy.get(), CURLINFO_PRETRANSFER_TIME_T, &sent_at);
    return sent_at == 0 ? NetworkFailure::kUnreachable : NetworkFailure::kNoAnswer;
  }
  return NetworkFailure::kCut;
}

Result<Response> complete(Transfer& t, CURLcode code) {
  if (code == CURLE_OK) {
    long status = 0;
    curl_easy_getinfo(t.easy.get(), CURLINFO_RESPONSE_CODE, &status);
    t.response.status = static_cast<int>(status);
    if (!t.began) {
      // An empty body: the sink still learns the status and headers.
      t.began = true;
      t.sink->begin(t.response.status, t.response.headers);
    }
    return std::move(t.response);
  }
  std::string what = t.sink_refused ? "the receiver stopped the transfer"
                                    : (t.error[0] ? std::string(t.error) : std::string(curl_easy_strerror(code)));
  if (code == CURLE_OPERATION_TIMEDOUT && !t.sink_refused) what = "timed out: " + what;
  Error error{ErrorCode::kNetwork,
              "`" + redact_query(t.url) + "`: " + what + " (after " + std::to_string(t.body_bytes) + " body bytes)"};
  if (!t.sink_refused) error.network = failure_kind(t, code);
  return unexpected(std::move(error));
}

// The multi handles of finished run() calls are pooled: each keeps its connection cache, so the
// next run() reuses the connections the last one left open (a Session's transport serves every
// get_kernel of the process this way).
//
// After fork(), the pooled handles and their sockets are the parent's: a child that used them would
// write into the parent's connections, and one that cleaned them up would close (TLS: end) them.
// The child leaves them alone, untouched and never freed, and opens its own.
class CurlTransport final : public Transport {
 public:
  CurlTransport() = default;
  ~CurlTransport() override {
    std::lock_guard lock(mutex_);
    if (::getpid() != owner_) abandon_pool();
  }
  CurlTransport(const CurlTransport&) = delete;
  CurlTransport& operator=(const CurlTransport&) = delete;

  std::uint64_t connections_opened() const override { return connections_.load(); }

  void run(Workload& work, int max_parallel) override {
    global_init();
    MultiHandle multi = acquire();
    std::map<CURL*, std::unique_ptr<Transfer>> in_flight;
    while (true) {
      while (static_cast<int>(in_flight.size()) < max_parallel) {
        auto item = work.next();
        if (!item) break;
        auto t = make_transfer(std::move(*item));
        CURL* e = t->easy.get();
        curl_multi_add_handle(multi.get(), e);
        in_flight.emplace(e, std::move(t));
      }
      if (in_flight.empty()) {
        if (work.done()) break;
        work.wait_idle();
        continue;
      }
      int running = 0;
      curl_multi_perform(multi.get(), &running);
      int queued = 0;
      while (CURLMsg* msg = curl_multi_info_read(multi.get(), &queued)) {
        if (msg->msg != CURLMSG_DONE) continue;
        CURL* e = msg->easy_handle;
        const CURLcode code = msg->data.result;
        long connects = 0;
        if (curl_easy_getinfo(e, CURLINFO_NUM_CONNECTS, &connects) == CURLE_OK && connects > 0) {
          connections_ += static_cast<std::uint64_t>(connects);
        }
        curl_multi_remove_handle(multi.get(), e);
        auto node = in_flight.extract(e);
        Transfer& t = *node.mapped();
        work.finished(t.id, complete(t, code));
      }
      if (!in_flight.empty() && running > 0) curl_multi_poll(multi.get(), nullptr, 0, 50, nullptr);
    }
    release(std::move(multi));
  }

 private:
  MultiHandle acquire() {
    {
      std::lock_guard lock(mutex_);
      if (::getpid() != owner_) {  // a forked child: see the class comment
        abandon_pool();
        owner_ = ::getpid();
      }
      if (!pool_.empty()) {
        MultiHandle m = std::move(pool_.back());
        pool_.pop_back();
        return m;
      }
    }
    return MultiHandle(curl_multi_init());
  }
  void release(MultiHandle multi) {
    std::lock_guard lock(mutex_);
    if (pool_.size() < 8) pool_.push_back(std::move(multi));
  }
  // REQUIRES: mutex_ held. The parent's handles, left as they are (deliberately never freed).
  void abandon_pool() {
    for (MultiHandle& multi : pool_) static_cast<void>(multi.release());
    pool_.clear();
  }

  std::mutex mutex_;
  std::vector<MultiHandle> pool_;
  pid_t owner_ = ::getpid();  // the process the pooled handles belong to
  std::atomic<std::uint64_t> connections_{0};
};

}  // namespace

std::shared_ptr<Transport> make_curl_transport() {
  return std::make_shared<CurlTransport>();
}

}  // namespace kernelhub::client
