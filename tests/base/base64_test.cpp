#include "kernelhub/base/internal/base64.hpp"

#include <catch2/catch.hpp>

namespace kernelhub {
namespace {

TEST_CASE("base64 matches the RFC 4648 test vectors both ways") {
  const std::pair<const char*, const char*> vectors[] = {{"", ""},
                                                         {"f", "Zg=="},
                                                         {"fo", "Zm8="},
                                                         {"foo", "Zm9v"},
                                                         {"foob", "Zm9vYg=="},
                                                         {"fooba", "Zm9vYmE="},
                                                         {"foobar", "Zm9vYmFy"}};
  for (const auto& [bytes, text] : vectors) {
    INFO(bytes);
    CHECK(base64_encode(std::string_view(bytes)) == text);
    CHECK(base64_decode(text) == std::optional<std::string>(bytes));
    CHECK(base64_decode_lenient(text) == std::optional<std::string>(bytes));
  }
  const std::string binary("\x00\xff\x10\x80", 4);
  CHECK(base64_decode(base64_encode(binary)) == binary);
}

TEST_CASE("strict base64 accepts one spelling per value") {
  for (const char* bad :
       {"Zg", "Zg=", "Zh==", "Zm9=", "Z===", "Zg==Zg==", " Zg==", "Zg==\n", "Zm9v!", "Zm-v", "====", "Zm9vY"}) {
    INFO(bad);
    CHECK_FALSE(base64_decode(bad));
  }
}

TEST_CASE("lenient base64 takes missing padding and ignores dropped bits, nothing else") {
  CHECK(base64_decode_lenient("Zg") == std::optional<std::string>("f"));
  CHECK(base64_decode_lenient("Zm8") == std::optional<std::string>("fo"));
  CHECK(base64_decode_lenient("Zh") == std::optional<std::string>("f"));
  CHECK(base64_decode_lenient("Zm9v==") == std::optional<std::string>("foo"));
  CHECK(base64_decode_lenient("=") == std::optional<std::string>(""));
  for (const char* bad : {"Z", "Zm9vY", "Zg=x", "Z=g", "Zg===", "Zm 9v", "!!!", "Zg==\n"}) {
    INFO(bad);
    CHECK_FALSE(base64_decode_lenient(bad));
  }
}

}  // namespace
}  // namespace kernelhub
