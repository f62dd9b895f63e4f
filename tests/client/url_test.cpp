// The client's URL helpers (client/src/url.hpp, over libcurl's CURLU): what a redirect or a Link
// header leads to, and which origin gets the token.
#include "url.hpp"

#include <catch2/catch.hpp>

namespace kernelhub::client {
namespace {

TEST_CASE("url::resolve follows every form of Location (RFC 3986 section 5.4)") {
  const std::string base = "http://hub.test:8080/api/kernels/org/name/tree/main?cursor=1";
  const std::pair<const char*, const char*> cases[] = {
      {"https://cdn.test/blob?sig=x", "https://cdn.test/blob?sig=x"},
      {"//other.test/x", "http://other.test/x"},
      {"/api/kernels/org/renamed", "http://hub.test:8080/api/kernels/org/renamed"},
      {"next", "http://hub.test:8080/api/kernels/org/name/tree/next"},
      {"../../x/./y", "http://hub.test:8080/api/kernels/org/x/y"},
      {"?cursor=2", "http://hub.test:8080/api/kernels/org/name/tree/main?cursor=2"},
      {"/a/../../b", "http://hub.test:8080/b"},
  };
  for (const auto& [location, expected] : cases) {
    INFO(location);
    const auto resolved = url::resolve(base, location);
    REQUIRE(resolved);
    CHECK(*resolved == expected);
  }
  const auto bad = url::resolve(base, "http://[not-a-host/x?sig=secret");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == ErrorCode::kCorruptFile);
  CHECK(bad.error().message.find("secret") == std::string::npos);  // queries stay out of messages
}

TEST_CASE("url::origin: one spelling per origin, and none for what does not parse") {
  CHECK(url::origin("HTTP://Hub.Test/a?b") == "http://hub.test:80");
  CHECK(url::origin("https://hub.test") == "https://hub.test:443");
  CHECK(url::origin("http://user:pw@127.0.0.1:8080/x") == "http://127.0.0.1:8080");
  CHECK(url::origin("http://[::1]:9/") == "http://[::1]:9");
  CHECK(url::origin("https://hub.test:443/") == url::origin("https://hub.test/x"));
  CHECK(url::origin("http://localhost:1") != url::origin("http://127.0.0.1:1"));
  CHECK(url::origin("not a url").empty());
}

TEST_CASE("url::redact drops the query (signed URLs carry secrets there)") {
  CHECK(url::redact("https://cdn.test/blob?sig=secret") == "https://cdn.test/blob?…");
  CHECK(url::redact("https://hub.test/x") == "https://hub.test/x");
}

}  // namespace
}  // namespace kernelhub::client
