#include "kernelhub/local_kernels.hpp"

#include <catch2/catch.hpp>

namespace kernelhub {
namespace {

TEST_CASE("LOCAL_KERNELS maps repo ids to paths, entries separated by colons") {
  const auto map = parse_local_kernels("org/a=/tmp/a:org/b=relative/b").value();
  REQUIRE(map.size() == 2);
  CHECK(map.at("org/a") == "/tmp/a");
  CHECK(map.at("org/b") == "relative/b");
  CHECK(parse_local_kernels("").value().empty());
}

TEST_CASE("malformed LOCAL_KERNELS entries are named in the error") {
  for (const char* bad : {"org/a", "=/tmp", "org/a=", "not a repo=/tmp", "a/b/c=/tmp"}) {
    INFO(bad);
    const auto map = parse_local_kernels(bad);
    REQUIRE_FALSE(map.has_value());
    CHECK(map.error().code == ErrorCode::kInvalidArgument);
    CHECK_THAT(map.error().message, Catch::Contains("LOCAL_KERNELS"));
  }
}

}  // namespace
}  // namespace kernelhub
