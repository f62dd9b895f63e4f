#include "kernelhub/server/repo_path.hpp"

#include <catch2/catch.hpp>

#include "kernelhub/server/repo_key.hpp"

using namespace kernelhub::server;
using kernelhub::RepoType;

TEST_CASE("validate_repo_path accepts ordinary relative paths", "[server][repo_path]") {
  CHECK(validate_repo_path("README.md"));
  CHECK(validate_repo_path("build/torch-cpu/_ops.py"));
  CHECK(validate_repo_path("a b/c%20d.txt"));
  CHECK(validate_repo_path(".gitattributes"));
}

TEST_CASE("validate_repo_path rejects every escape and oddity", "[server][repo_path]") {
  const std::string long_segment(300, 'a');
  std::string long_path;
  for (int i = 0; i < 120; ++i) long_path += "abcdefghi/";
  long_path += "x";
  for (std::string bad :
       {std::string(""), std::string("../etc/passwd"), std::string("a/../../b"), std::string("/abs"),
        std::string("a\\b"), std::string("a\0b", 3), std::string("a//b"), std::string("a/"), std::string("./a"),
        std::string(".git/config"), std::string("x/.git/y"), std::string("a\nb"), long_segment, long_path}) {
    INFO("path: " << bad);
    const auto status = validate_repo_path(bad);
    REQUIRE_FALSE(status);
    CHECK(status.error().code == kernelhub::ErrorCode::kInvalidArgument);
  }
}

TEST_CASE("validate_repo_path says which rule was broken", "[server][repo_path]") {
  CHECK(validate_repo_path("a/../b").error().message == "path `a/../b` is not allowed: it has a `.` or `..` segment");
  CHECK(validate_repo_path(std::string("a\0b", 3)).error().message ==
        "path `a\\x00b` is not allowed: it contains a NUL byte");
  CHECK(validate_repo_path("/etc/passwd").error().message ==
        "path `/etc/passwd` is not allowed: it is absolute; paths are relative to the repo root");
}

TEST_CASE("normalize_folder_path drops trailing slashes", "[server][repo_path]") {
  CHECK(*normalize_folder_path("build/") == "build");
  CHECK(*normalize_folder_path("./build/x//") == "build/x");
  CHECK_FALSE(normalize_folder_path("../x/"));
}

TEST_CASE("validate_ref_name follows the Hub's branch rules", "[server][repo_path]") {
  CHECK(validate_ref_name("main"));
  CHECK(validate_ref_name("v1"));
  CHECK(validate_ref_name("refs/pr/1"));
  CHECK_FALSE(validate_ref_name(""));
  CHECK_FALSE(validate_ref_name("a..b"));
  CHECK_FALSE(validate_ref_name("-x"));
  CHECK_FALSE(validate_ref_name("a b"));
  CHECK_FALSE(validate_ref_name("x/"));
}

TEST_CASE("parse_repo_key mirrors validate_repo_id", "[server][repo_key]") {
  auto key = parse_repo_key(RepoType::kKernel, "acme/rms-norm");
  REQUIRE(key);
  CHECK(key->ns == "acme");
  CHECK(key->name == "rms-norm");
  CHECK(key->id() == "acme/rms-norm");
  CHECK(parse_repo_key(RepoType::kModel, "gpt2")->id() == "gpt2");
  for (const char* bad : {"a/b/c", "a--b/c", "-a/b", "a/b.git", "a/..", "a/b c", ""}) {
    INFO(bad);
    CHECK_FALSE(parse_repo_key(RepoType::kModel, bad));
  }
}
