#include "upload_call.hpp"

#include <nlohmann/json.hpp>
#include <thread>

#include "hub_errors.hpp"
#include "url.hpp"

namespace kernelhub::client {

namespace {

std::string server_reason(const Response& response, const std::string& body) {
  if (const std::string* m = response.header("x-error-message"); m && !m->empty()) return *m;
  const auto doc = nlohmann::json::parse(body, nullptr, false);
  if (!doc.is_discarded() && doc.is_object() && doc.contains("error") && doc["error"].is_string()) {
    return doc["error"].get<std::string>();
  }
  return body.substr(0, 300);
}

// What a publisher can do about a refusal of a write.
Error write_error(const Response& response, const std::string& body, const std::string& doing, const std::string& url) {
  const int status = response.status;
  const std::string code = response.header("x-error-code") ? *response.header("x-error-code") : "";
  const std::string detail = " (HTTP " + std::to_string(status) + (code.empty() ? "" : " " + code) + " from `" +
                             url::redact(url) + "`: " + server_reason(response, body) + ")";
  if (status == 401) {
    return Error{ErrorCode::kUnauthorized, "the Hub refused the token while " + doing + detail +
                                               "; set HF_TOKEN to a valid, unexpired token with write access"};
  }
  if (status == 403) {
    return Error{ErrorCode::kUnauthorized, "the token may not write here (" + doing + ")" + detail +
                                               "; use a token with write access to this namespace"};
  }
  if (code == "RepoNotFound") {
    return Error{ErrorCode::kNotFound,
                 "the repo does not exist (" + doing + ")" + detail + "; create it on the Hub or pass --create",
                 Missing::kRepo};
  }
  if (status == 412 || code == "ParentCommitMismatch") {
    return Error{ErrorCode::kInvalidArgument, "the branch moved since the upload was planned (" + doing + ")" + detail +
                                                  "; nothing was committed: run the command again"};
  }
  if (status == 404) return Error{ErrorCode::kNotFound, "not found while " + doing + detail};
  if (status >= 400 && status < 500) {
    return Error{ErrorCode::kInvalidArgument, "the Hub refused " + doing + detail};
  }
  return Error{ErrorCode::kNetwork, "the Hub failed while " + doing + detail};
}

}  // namespace

Result<ApiAnswer> UploadCall::api(const std::string& method, const std::string& target, std::string body,
                                  const std::string& content_type, const std::string& doing, bool retry,
                                  bool accept_409, std::vector<Header> extra_headers) const {
  Request request;
  request.method = method;
  request.url = target;
  request.body = std::move(body);
  request.headers = {{"User-Agent", settings.user_agent()}, {"Accept", "application/json"}};
  if (!content_type.empty()) request.headers.push_back({"Content-Type", content_type});
  // A publisher plans its commit on the branch as it is now: a cache on the way (a site cache,
  // docs/CLUSTER.md) must ask the Hub, not hand back a branch answer from before the last publish.
  if (method == "GET") request.headers.push_back({"Cache-Control", "no-cache"});
  // The token goes to the Hub's own origin only, never to a host an answer points at.
  if (settings.token && url::origin(target) == url::origin(settings.endpoint)) {
    request.headers.push_back({"Authorization", "Bearer " + settings.token->value()});
  }
  for (auto& h : extra_headers) request.headers.push_back(std::move(h));
  return send(std::move(request), retry, doing, accept_409);
}

Result<ApiAnswer> UploadCall::storage(const std::string& method, const std::string& target, std::string body,
                                      std::optional<FileSlice> file, const std::vector<Header>& headers,
                                      const std::string& doing) const {
  Request request;
  request.method = method;
  request.url = target;
  request.body = std::move(body);
  request.body_file = std::move(file);
  request.headers = headers;
  request.headers.push_back({"User-Agent", settings.user_agent()});
  return send(std::move(request), true, doing, false);
}

Result<ApiAnswer> UploadCall::send(Request request, bool retry, const std::string& doing, bool accept_409) const {
  if (settings.offline) {
    return unexpected(ErrorCode::kOfflineMiss, "offline mode (HF_HUB_OFFLINE) forbids " + doing);
  }
  request.connect_timeout = settings.connect_timeout;
  // Uploads can sit on a slow link; the read timeout is the download one (no byte for this long).
  request.read_timeout = std::max(settings.api_timeout, settings.read_timeout);
  auto delay = settings.backoff_base;
  for (int attempt = 1;; ++attempt) {
    StringSink sink;
    auto result = transport.perform(request, sink);
    std::string why;
    std::optional<std::chrono::milliseconds> wait;
    if (!result) {
      why = result.error().message;
    } else if (is_retriable_status(result->status)) {
      why = "HTTP " + std::to_string(result->status);
      wait = retry_after(*result);
    } else if (result->status >= 400 && !(accept_409 && result->status == 409)) {
      return unexpected(write_error(*result, sink.body(), doing, request.url));
    } else {
      return ApiAnswer{*result, result->status, sink.take()};
    }
    if (!retry || attempt > settings.max_retries) {
      if (result) return unexpected(write_error(*result, sink.body(), doing, request.url));
      return unexpected(ErrorCode::kNetwork, "connection failed while " + doing + " after " + std::to_string(attempt) +
                                                 " attempt(s): " + why + "; run the command again to resume");
    }
    settings.clock->sleep_for(wait ? std::min(*wait, settings.retry_after_max) : delay);
    delay = std::min(delay * 2, settings.backoff_max);
  }
}

std::string api_base(const Settings& settings, const RepoId& repo, RepoType type) {
  return settings.endpoint + "/api/" + std::string(api_segment(type)) + "/" + repo.to_string();
}

std::string web_base(const Settings& settings, const RepoId& repo, RepoType type) {
  return settings.endpoint + "/" + std::string(url_prefix(type)) + repo.to_string();
}

}  // namespace kernelhub::client
