#include "kernelhub/fetch/internal/local_kernels.hpp"

#include <catch2/catch.hpp>

#include "kernelhub/fetch/internal/fetch.hpp"
#include "kernels_words.hpp"

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

TEST_CASE("a malformed entry in the kernels package's words, for the Python shim") {
  const auto map = parse_local_kernels("org/a");
  REQUIRE_FALSE(map.has_value());
  CHECK(map.error().code == ErrorCode::kInvalidArgument);
  // kernels/load.py `_parse_local_kernel_overrides`, word for word.
  CHECK(kernels_words::message(map.error()) ==
        "Invalid LOCAL_KERNELS entry: org/a. Expected format: repo_id_1=path_1:repo_id_2=path_2");
}

TEST_CASE("local_kernel_dir: the directory LOCAL_KERNELS names for a repo, if any") {
  CHECK(local_kernel_dir("org/a", map_environment({})).value() == std::nullopt);
  const auto env = map_environment({{"LOCAL_KERNELS", "org/a=/tmp/a:org/b=/tmp/b"}});
  CHECK(local_kernel_dir("org/b", env).value() == std::optional<std::filesystem::path>("/tmp/b"));
  CHECK(local_kernel_dir("org/c", env).value() == std::nullopt);
  CHECK(local_kernel_dir("not a repo", env).value() == std::nullopt);
  // A malformed value fails every lookup, also of a repo it does not concern.
  const auto bad = local_kernel_dir("org/a", map_environment({{"LOCAL_KERNELS", "org/a=/tmp/a:junk"}}));
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().code == ErrorCode::kInvalidArgument);
}

TEST_CASE("exactly one of revision and version, in the kernels package's words") {
  CHECK(require_revision_or_version(std::string("main"), std::nullopt).has_value());
  CHECK(require_revision_or_version(std::nullopt, 1).has_value());
  const auto both = require_revision_or_version(std::string("main"), 1);
  REQUIRE_FALSE(both.has_value());
  CHECK(both.error().code == ErrorCode::kInvalidArgument);
  CHECK(both.error().message == "Only one of `revision` or `version` must be specified.");
  const auto neither = require_revision_or_version(std::nullopt, std::nullopt);
  REQUIRE_FALSE(neither.has_value());
  CHECK_THAT(neither.error().message, Catch::StartsWith("A kernel version or revision must be specified."));
}

}  // namespace
}  // namespace kernelhub
