#include "kernelhub/base/internal/percent_encoding.hpp"

#include <catch2/catch.hpp>

namespace kernelhub {
namespace {

TEST_CASE("percent_encode keeps only the unreserved characters, as huggingface_hub quotes") {
  CHECK(percent_encode("refs/pr/1") == "refs%2Fpr%2F1");
  CHECK(percent_encode("a b~c-d_e.f") == "a%20b~c-d_e.f");
  CHECK(percent_encode("é") == "%C3%A9");
  CHECK(percent_encode_path("build/a b/x.so") == "build/a%20b/x.so");
  CHECK(percent_encode(std::string("\0", 1)) == "%00");
}

TEST_CASE("percent_decode reverses percent_encode and refuses malformed escapes") {
  for (const char* text : {"refs/pr/1", "a b+c", "é/ü", "%", "~"}) {
    INFO(text);
    CHECK(percent_decode(percent_encode(text)) == std::optional<std::string>(text));
  }
  CHECK(percent_decode("a+b", true) == std::optional<std::string>("a b"));
  CHECK(percent_decode("a+b") == std::optional<std::string>("a+b"));
  CHECK(percent_decode("%2f%2F") == std::optional<std::string>("//"));
  for (const char* bad : {"%", "%2", "%zz", "a%g1"}) {
    INFO(bad);
    CHECK_FALSE(percent_decode(bad));
  }
}

}  // namespace
}  // namespace kernelhub
