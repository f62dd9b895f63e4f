#include "hub_errors.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "url.hpp"

namespace kernelhub::client {

std::string What::describe() const {
  std::string out;
  if (!path.empty()) out += "file `" + path + "` in ";
  out += repo;
  if (!revision.empty()) out += " at revision `" + revision + "`";
  if (!commit.empty() && commit != revision) out += " (commit `" + commit + "`)";
  return out;
}

std::string repo_label(const RepoId& repo, RepoType type) {
  return std::string(to_string(type)) + " repo `" + repo.to_string() + "`";
}

namespace {

std::string server_message(const Response& response, std::string_view body) {
  std::string message;
  if (const std::string* m = response.header("x-error-message")) message = *m;
  if (message.empty() && !body.empty()) {
    auto doc = nlohmann::json::parse(body, nullptr, false);
    if (!doc.is_discarded() && doc.is_object() && doc.contains("error")) {
      if (doc["error"].is_string()) message = doc["error"].get<std::string>();
    } else if (doc.is_discarded() && body.size() < 300 && body.find('<') == std::string_view::npos) {
      message = std::string(body);
    }
  }
  while (!message.empty() && (message.back() == '\n' || message.back() == '\r')) message.pop_back();
  std::string out = message.empty() ? "" : ": " + message;
  if (const std::string* id = response.header("x-request-id")) out += " (request id " + *id + ")";
  return out;
}

}  // namespace

Error error_from_response(const Response& response, std::string_view body, const What& what,
                          std::string_view request_url) {
  const int status = response.status;
  const std::string code = response.header("x-error-code") ? *response.header("x-error-code") : "";
  const std::string http = "HTTP " + std::to_string(status) + (code.empty() ? "" : " " + code);
  const std::string from = " from `" + url::redact(request_url) + "`";
  const std::string detail = " (" + http + from + server_message(response, body) + ")";
  if (code == "RevisionNotFound") {
    return Error{ErrorCode::kNotFound,
                 "revision `" + what.revision + "` not found in " + what.repo + detail +
                     "; use a branch, tag, v<N> version or commit that exists",
                 Missing::kRevision};
  }
  if (code == "EntryNotFound") {
    return Error{ErrorCode::kNotFound, what.describe() + " not found" + detail, Missing::kFile};
  }
  if (code == "GatedRepo") {
    return Error{ErrorCode::kGated,
                 what.repo + " is gated" + detail +
                     "; accept its conditions on the Hub and use a token (HF_TOKEN) that has access"};
  }
  if (code == "RepoNotFound" || (status == 404 && code.empty() && what.path.empty())) {
    return Error{ErrorCode::kNotFound,
                 what.repo + " not found" + detail + "; check the name, or set HF_TOKEN if the repo is private",
                 Missing::kRepo};
  }
  if (status == 401) {
    return Error{ErrorCode::kUnauthorized,
                 "not authorized to read " + what.describe() + detail + "; set HF_TOKEN to a valid token"};
  }
  if (status == 403) {
    return Error{ErrorCode::kUnauthorized, "access to " + what.describe() + " denied" + detail +
                                               "; make sure your token has read permission for this repo"};
  }
  if (status == 404) {
    return Error{ErrorCode::kNotFound, what.describe() + " not found" + detail};
  }
  if (status == 400) {
    return Error{ErrorCode::kInvalidArgument, "the Hub rejected the request for " + what.describe() + detail};
  }
  return Error{ErrorCode::kNetwork, "request for " + what.describe() + " failed" + detail};
}

bool is_retriable_status(int status) {
  return status == 408 || status == 429 || status == 500 || status == 502 || status == 503 || status == 504;
}

// A server's wait, however large or negative, is read as at most a day (callers cap it further):
// multiplying an unbounded value into milliseconds would overflow.
constexpr long kMaxRetryAfterSeconds = 24 * 60 * 60;

std::optional<std::chrono::milliseconds> retry_after(const Response& response) {
  if (const std::string* limit = response.header("ratelimit")) {
    // "api";r=0;t=55 -> wait t+1 seconds when nothing remains.
    const auto r = limit->find("r=");
    const auto t = limit->find("t=");
    if (r != std::string::npos && t != std::string::npos && limit->compare(r, 3, "r=0") == 0) {
      long seconds = 0;
      std::from_chars(limit->data() + t + 2, limit->data() + limit->size(), seconds);
      return std::chrono::milliseconds((std::clamp(seconds, 0L, kMaxRetryAfterSeconds) + 1) * 1000);
    }
  }
  if (const std::string* value = response.header("retry-after")) {
    long seconds = -1;
    auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), seconds);
    if (ec == std::errc() && seconds >= 0) {
      return std::chrono::milliseconds(std::min(seconds, kMaxRetryAfterSeconds) * 1000);
    }
  }
  return std::nullopt;
}

bool gives_up(const Error& error) {
  return error.network == NetworkFailure::kUnreachable || error.network == NetworkFailure::kNoAnswer;
}

std::string seconds_text(std::chrono::steady_clock::duration elapsed) {
  const double seconds = std::chrono::duration<double>(elapsed).count();
  char text[32];
  std::snprintf(text, sizeof text, seconds < 10 ? "%.1f s" : "%.0f s", seconds);
  return text;
}

namespace {

std::string seconds_setting(std::chrono::milliseconds value) {
  const long long ms = value.count();
  return ms % 1000 == 0 ? std::to_string(ms / 1000) : std::to_string(static_cast<double>(ms) / 1000.0);
}

}  // namespace

std::string unreachable_advice(const Settings& settings) {
  return "If the Hub is down for a while, set HF_HUB_OFFLINE=1 to use only what the cache holds; otherwise check "
         "HF_ENDPOINT (`" +
         settings.endpoint + "`) and the network. Timeouts, in seconds: KERNELHUB_CONNECT_TIMEOUT=" +
         seconds_setting(settings.connect_timeout) +
         " to connect, HF_HUB_ETAG_TIMEOUT=" + seconds_setting(settings.api_timeout) +
         " for an API answer, HF_HUB_DOWNLOAD_TIMEOUT=" + seconds_setting(settings.read_timeout) +
         " between the bytes of a file";
}

Error unreachable(const Settings& settings, std::string_view request_url, const std::string& what, const Error& cause,
                  int attempts, std::chrono::steady_clock::time_point started) {
  const std::string origin = url::origin(request_url);
  const std::string host = origin == url::origin(settings.endpoint) ? "the Hub at `" + origin + "` (HF_ENDPOINT)"
                                                                    : "the storage host `" + origin + "`";
  const std::string how = cause.network == NetworkFailure::kNoAnswer
                              ? " accepted the request and sent no answer within the timeout"
                              : " could not be reached";
  const std::string tried = std::to_string(attempts) + (attempts == 1 ? " attempt" : " attempts") + " over " +
                            seconds_text(settings.clock->now() - started);
  std::string message = host + how + ", for " + what + " (" + cause.message + "; " + tried +
                        "; a host that cannot be reached or does not answer is not asked again). " +
                        unreachable_advice(settings);
  return Error{ErrorCode::kNetwork, std::move(message), Missing::kUnspecified, cause.network};
}

Error not_asked_again(const Error& first, const std::string& what) {
  Error error = first;
  error.message = what + " was not asked for, since earlier " + first.message;
  return error;
}

std::string normalize_etag(std::string_view etag) {
  if (etag.starts_with("W/")) etag.remove_prefix(2);
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') etag = etag.substr(1, etag.size() - 2);
  return std::string(etag);
}

}  // namespace kernelhub::client
