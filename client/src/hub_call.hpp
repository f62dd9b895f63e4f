// HubCall: how one call to the Hub is made, whatever it asks for (the call policy, as
// huggingface_hub keeps it in `utils/_http.py`): the headers (the token to the Hub's origin
// only), retries with backoff on network errors and 408/429/5xx (Retry-After honoured), a host
// given up on when it cannot be reached (client_state.hpp), redirects, and a Hub error answer
// turned into a kernelhub::Error (hub_errors.hpp). What to ask for, and where the bytes go, is
// the callers' business: hub_client.cpp (revisions, refs, listings) and file_download.cpp.
//
// Thread safety: a HubCall belongs to one public call on one thread; the ClientState it shares
// is thread-safe. Ownership: it borrows the settings, the transport and the state.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "client_state.hpp"
#include "hub_errors.hpp"
#include "kernelhub/base/result.hpp"
#include "kernelhub/client/internal/cache_layout.hpp"
#include "kernelhub/client/internal/settings.hpp"
#include "kernelhub/client/internal/transport.hpp"

namespace kernelhub::client {

// Redirects followed for one request before it is taken for a loop.
inline constexpr int kMaxRedirects = 10;

// The wait after `failures` failed attempts: backoff_base, doubled each time up to backoff_max.
std::chrono::milliseconds backoff_delay(const Settings& settings, int failures);

// One public call's requests: its Transport, what the client has learnt (ClientState), the
// request counter.
struct HubCall {
  const Settings& settings;
  Transport& transport;
  ClientState& state;
  int requests = 0;
  std::optional<Response> last_error_response;  // the last HTTP error answer, for its headers

  // User-Agent, and the token when `target` is on the Hub's origin.
  std::vector<Header> headers(const std::string& target) const;

  // A request with retries on network errors and 408/429/5xx. 2xx/3xx come back as responses;
  // other statuses (or the last retriable one) become errors. A host that cannot be reached or
  // does not answer is not retried, and not asked again by this client (client_state.hpp).
  Result<Response> send(Request request, StringSink& sink, const What& what);

  // GET of an API answer. Redirects are followed (a renamed repo answers 307 on API routes too),
  // up to kMaxRedirects; headers() sends the token to the Hub's origin only, so a hop to another
  // host gets none. `head`, when given, receives the final response's head.
  Result<std::string> get(const std::string& url, const What& what, Response* head = nullptr);
};

// The rel="next" URL of a paginated answer's Link header, if any.
std::optional<std::string> next_link(const Response& response);

// "`a`, `b`", or `none` when there are no items.
std::string quoted_list(const std::vector<std::string>& items, std::string_view none = "none");

// What a call says instead of the Hub's answer: offline, the request is not made and a miss
// names what the cache holds; when the Hub cannot be reached, an answer from the cache is noted.

// kOfflineMiss for `what`, naming the refs and snapshots the cache holds for the repo.
Error offline_miss(const CacheLayout& layout, const std::string& what);

// What the cache holds for the repo: "the cache at `…` holds refs … and snapshots …".
std::string offline_inventory(const CacheLayout& layout);

// The note for an answer taken from the cache because `why` (a kNetwork error) kept the Hub from
// giving it: "<why, short>: <used>".
std::string fallback_note(const Error& why, const std::string& used);

}  // namespace kernelhub::client
