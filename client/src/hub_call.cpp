#include "hub_call.hpp"

#include <algorithm>

#include "url.hpp"

namespace kernelhub::client {

std::chrono::milliseconds backoff_delay(const Settings& settings, int failures) {
  auto delay = settings.backoff_base;
  for (int i = 1; i < failures && delay < settings.backoff_max; ++i) delay *= 2;
  return std::min(delay, settings.backoff_max);
}

std::vector<Header> HubCall::headers(const std::string& target) const {
  std::vector<Header> out{{"User-Agent", settings.user_agent()}};
  if (settings.token && url::origin(target) == url::origin(settings.endpoint)) {
    out.push_back({"Authorization", "Bearer " + settings.token->value()});
  }
  return out;
}

Result<Response> HubCall::send(Request request, StringSink& sink, const What& what) {
  if (settings.offline) {
    return unexpected(ErrorCode::kOfflineMiss,
                      "offline mode (HF_HUB_OFFLINE) forbids the request for " + what.describe());
  }
  const std::string origin = url::origin(request.url);
  if (auto down = state.given_up(origin)) return unexpected(not_asked_again(*down, what.describe()));
  request.connect_timeout = settings.connect_timeout;
  request.read_timeout = settings.api_timeout;
  const auto started = settings.clock->now();
  for (int attempt = 1;; ++attempt) {
    ++requests;
    state.count_request();
    auto result = transport.perform(request, sink);
    std::optional<std::chrono::milliseconds> wait;
    std::string why;
    if (!result) {
      if (gives_up(result.error())) {
        Error error = unreachable(settings, request.url, what.describe(), result.error(), attempt, started);
        state.give_up(origin, error);
        return unexpected(std::move(error));
      }
      why = result.error().message;
    } else if (is_retriable_status(result->status)) {
      why = "HTTP " + std::to_string(result->status);
      wait = retry_after(*result);
      if (wait) wait = std::min(*wait, settings.retry_after_max);
    } else if (result->status >= 400) {
      last_error_response = *result;
      return unexpected(error_from_response(*result, sink.body(), what, request.url));
    } else {
      return result;
    }
    if (attempt > settings.max_retries) {
      if (result) return unexpected(error_from_response(*result, sink.body(), what, request.url));
      return unexpected(Error{ErrorCode::kNetwork,
                              "cannot reach the Hub for " + what.describe() + " after " + std::to_string(attempt) +
                                  " attempts over " + seconds_text(settings.clock->now() - started) + ": " + why +
                                  ". " + unreachable_advice(settings),
                              Missing::kUnspecified, result.error().network});
    }
    settings.clock->sleep_for(wait ? *wait : backoff_delay(settings, attempt));
  }
}

Result<std::string> HubCall::get(const std::string& url, const What& what, Response* head) {
  std::string target = url;
  for (int hop = 0; hop <= kMaxRedirects; ++hop) {
    Request request;
    request.url = target;
    request.headers = headers(target);
    request.headers.push_back({"Accept", "application/json"});
    StringSink sink;
    KH_ASSIGN_OR_RETURN(Response response, send(std::move(request), sink, what));
    if (response.status >= 300 && response.status < 400) {
      const std::string* location = response.header("location");
      if (!location) {
        return unexpected(ErrorCode::kNetwork, "HTTP " + std::to_string(response.status) +
                                                   " without a Location from `" + url::redact(target) + "` for " +
                                                   what.describe());
      }
      KH_ASSIGN_OR_RETURN(target, url::resolve(target, *location));
      continue;
    }
    if (response.status >= 300) {
      return unexpected(ErrorCode::kNetwork, "unexpected HTTP " + std::to_string(response.status) + " from `" +
                                                 url::redact(target) + "` for " + what.describe());
    }
    if (head) *head = response;
    return sink.take();
  }
  return unexpected(ErrorCode::kNetwork, "too many redirects (" + std::to_string(kMaxRedirects) + ", a loop?) for " +
                                             what.describe() + ", last at `" + url::redact(target) + "`");
}

std::optional<std::string> next_link(const Response& response) {
  const std::string* link = response.header("link");
  if (!link) return std::nullopt;
  // <url>; rel="next", <url2>; rel="prev"
  std::size_t pos = 0;
  while (pos < link->size()) {
    const auto open = link->find('<', pos);
    if (open == std::string::npos) break;
    const auto close = link->find('>', open);
    if (close == std::string::npos) break;
    const auto end = link->find(',', close);
    const std::string params = link->substr(close + 1, end == std::string::npos ? std::string::npos : end - close - 1);
    if (params.find("rel=\"next\"") != std::string::npos || params.find("rel=next") != std::string::npos) {
      return link->substr(open + 1, close - open - 1);
    }
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  return std::nullopt;
}

std::string quoted_list(const std::vector<std::string>& items, std::string_view none) {
  if (items.empty()) return std::string(none);
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += ", ";
    out += "`" + item + "`";
  }
  return out;
}

std::string offline_inventory(const CacheLayout& layout) {
  const auto refs = layout.list_refs();
  const auto snapshots = layout.list_snapshots();
  if (refs.empty() && snapshots.empty()) {
    return "the cache at `" + layout.cache_root().string() + "` holds nothing for this repo";
  }
  return "the cache at `" + layout.cache_root().string() + "` holds refs " + quoted_list(refs) + " and snapshots " +
         quoted_list(snapshots);
}

Error offline_miss(const CacheLayout& layout, const std::string& what) {
  return Error{ErrorCode::kOfflineMiss, "offline mode (HF_HUB_OFFLINE) and " + what + " is not cached; " +
                                            offline_inventory(layout) +
                                            ". Download it once online, or unset HF_HUB_OFFLINE"};
}

std::string fallback_note(const Error& why, const std::string& used) {
  const char* how = why.network == NetworkFailure::kUnreachable ? "could not be reached"
                    : why.network == NetworkFailure::kNoAnswer  ? "did not answer"
                                                                : "failed";
  return std::string("the Hub ") + how + "; " + used;
}

}  // namespace kernelhub::client
