// Turning a Hub HTTP response into a kernelhub::Error, mirroring huggingface_hub
// `utils/_http.py` `hf_raise_for_status` @ee0a451, and the retry rules of `http_backoff`.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "kernelhub/base/error.hpp"
#include "kernelhub/client/internal/settings.hpp"
#include "kernelhub/client/internal/transport.hpp"
#include "kernelhub/client/repo_id.hpp"

namespace kernelhub::client {

// What a request was about, for error text: "kernel repo `org/name`", revision, file.
struct What {
  std::string repo;              // "kernel repo `org/name`"
  std::string revision;          // may be empty
  std::string path;              // may be empty
  std::string commit;            // what `revision` resolved to, when it is known and differs
  std::string describe() const;  // "file `p` in kernel repo `org/name` at revision `r`"
};

// "kernel repo `org/name`": What::repo for `repo`.
std::string repo_label(const RepoId& repo, RepoType type);

// REQUIRES: response.status >= 400.
Error error_from_response(const Response& response, std::string_view body, const What& what, std::string_view url);

// 408, 429, 500, 502, 503, 504.
bool is_retriable_status(int status);

// Integer seconds in Retry-After (or RateLimit "t=" when "r=0"), if any.
std::optional<std::chrono::milliseconds> retry_after(const Response& response);

// True for a transport failure after which a host is given up on (client_state.hpp): it could
// not be reached, or it accepted the request and sent no answer within the timeout.
bool gives_up(const Error& error);

// The kNetwork error for a host given up on: which host (HF_ENDPOINT, or a storage host), for
// what, why (`cause`), what was tried (`attempts` since `started`, on the settings' clock), and
// unreachable_advice().
Error unreachable(const Settings& settings, std::string_view url, const std::string& what, const Error& cause,
                  int attempts, std::chrono::steady_clock::time_point started);

// The error of a request not sent because its host was given up on with `first`.
Error not_asked_again(const Error& first, const std::string& what);

// What to do when the Hub cannot be reached: HF_HUB_OFFLINE, HF_ENDPOINT and the timeouts, with
// the values in force.
std::string unreachable_advice(const Settings& settings);

// "0.4 s", "12 s".
std::string seconds_text(std::chrono::steady_clock::duration elapsed);

// Strips W/ and quotes from an ETag.
std::string normalize_etag(std::string_view etag);

}  // namespace kernelhub::client
