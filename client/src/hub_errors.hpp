// Turning a Hub HTTP response into a kernelhub::Error, mirroring huggingface_hub
// `utils/_http.py` `hf_raise_for_status` @ee0a451 (hub-protocol.md §6), and the retry rules of
// `http_backoff` (§2.6).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "kernelhub/base/error.hpp"
#include "kernelhub/client/transport.hpp"

namespace kernelhub::client {

// What a request was about, for error text: "kernel repo `org/name`", revision, file.
struct What {
  std::string repo;      // "kernel repo `org/name`"
  std::string revision;  // may be empty
  std::string path;      // may be empty
  std::string commit;    // what `revision` resolved to, when it is known and differs
  std::string describe() const;  // "file `p` in kernel repo `org/name` at revision `r`"
};

// REQUIRES: response.status >= 400.
Error error_from_response(const Response& response, std::string_view body, const What& what, std::string_view url);

// 408, 429, 500, 502, 503, 504.
bool is_retriable_status(int status);

// Integer seconds in Retry-After (or RateLimit "t=" when "r=0"), if any.
std::optional<std::chrono::milliseconds> retry_after(const Response& response);

// Strips W/ and quotes from an ETag.
std::string normalize_etag(std::string_view etag);

}  // namespace kernelhub::client
