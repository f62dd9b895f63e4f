// libFuzzer target: what the Hub client reads from response heads (client/src/hub_errors.hpp,
// url.hpp): Retry-After and RateLimit, ETag/X-Linked-Etag normalisation, the error text built from
// X-Error-Code/X-Error-Message and a JSON body, and Location resolution against the request URL.
// Input: "<status byte><header lines>\n\n<body>"; each header line is "name: value".
// Beyond "no crash": waits are never negative and a redacted URL keeps no query string (signed
// URLs carry secrets there).
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz_require.hpp"
#include "hub_errors.hpp"
#include "url.hpp"

using kernelhub::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kernelhub::client;
  if (size == 0) return 0;
  Response response;
  response.status = 400 + data[0] % 200;
  std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::size_t blank = rest.find("\n\n");
  std::string_view head = rest.substr(0, blank);
  const std::string_view body = blank == std::string_view::npos ? std::string_view{} : rest.substr(blank + 2);
  while (!head.empty()) {
    const std::size_t nl = head.find('\n');
    const std::string_view line = head.substr(0, nl);
    head = nl == std::string_view::npos ? std::string_view{} : head.substr(nl + 1);
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string name(line.substr(0, colon));
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    response.headers.push_back({std::move(name), std::string(value)});
  }

  const std::string request_url = "https://huggingface.co/api/models/org/name/revision/main?expand=1";
  if (auto wait = retry_after(response)) require(wait->count() >= 0);
  for (const char* name : {"etag", "x-linked-etag"}) {
    if (const std::string* etag = response.header(name)) {
      const std::string normal = normalize_etag(*etag);
      require(normal.size() <= etag->size());
    }
  }
  const What what{"kernel repo `org/name`", "main", "build/x.so", ""};
  const auto error = error_from_response(response, body, what, request_url);
  require(!error.message.empty());
  (void)is_retriable_status(response.status);
  if (const std::string* location = response.header("location")) {
    if (const auto target = url::resolve(request_url, *location)) {
      (void)url::origin(*target);
      const std::string redacted = url::redact(*target);
      const std::size_t query = redacted.find('?');
      require(query == std::string::npos || redacted.substr(query) == "?…");
    }
  }
  return 0;
}
