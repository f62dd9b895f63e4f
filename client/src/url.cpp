#include "url.hpp"

#include <curl/curl.h>

#include <memory>
#include <optional>

namespace kernelhub::client::url {

namespace {

using UrlHandle = std::unique_ptr<CURLU, decltype(&curl_url_cleanup)>;

UrlHandle new_handle() {
  return UrlHandle(curl_url(), &curl_url_cleanup);
}

// Any scheme is parsed (a hostile Location may name one; the transport refuses non-HTTP ones).
constexpr unsigned kParseFlags = CURLU_NON_SUPPORT_SCHEME;

bool set_url(CURLU* handle, std::string_view text) {
  return curl_url_set(handle, CURLUPART_URL, std::string(text).c_str(), kParseFlags) == CURLUE_OK;
}

std::optional<std::string> part(CURLU* handle, CURLUPart which, unsigned flags = 0) {
  char* value = nullptr;
  if (curl_url_get(handle, which, &value, flags) != CURLUE_OK || value == nullptr) return std::nullopt;
  std::string out(value);
  curl_free(value);
  return out;
}

}  // namespace

std::string origin(std::string_view text) {
  const UrlHandle handle = new_handle();
  if (!handle || !set_url(handle.get(), text)) return {};
  const auto scheme = part(handle.get(), CURLUPART_SCHEME);
  auto host = part(handle.get(), CURLUPART_HOST);
  const auto port = part(handle.get(), CURLUPART_PORT, CURLU_DEFAULT_PORT);
  if (!scheme || !host || !port) return {};
  for (char& c : *host) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return *scheme + "://" + *host + ":" + *port;
}

Result<std::string> resolve(std::string_view base, std::string_view location) {
  const UrlHandle handle = new_handle();
  // Setting a relative reference on a handle that holds a URL resolves it against that URL.
  std::optional<std::string> resolved;
  if (handle && set_url(handle.get(), base) && set_url(handle.get(), location)) {
    resolved = part(handle.get(), CURLUPART_URL);
  }
  if (!resolved) {
    return unexpected(ErrorCode::kCorruptFile,
                      "the redirect or link `" + redact(location) + "` from `" + redact(base) + "` is not a URL");
  }
  return *resolved;
}

std::string redact(std::string_view text) {
  const auto q = text.find('?');
  if (q == std::string_view::npos) return std::string(text);
  return std::string(text.substr(0, q)) + "?…";
}

}  // namespace kernelhub::client::url
