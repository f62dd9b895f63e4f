#include "kernelhub/server/internal/repo_key.hpp"

#include <catch2/catch.hpp>

using namespace kernelhub::server;
using kernelhub::RepoType;

// The rules themselves: tests/base/hub_names_test.cpp and the differential test against
// huggingface_hub (tests/python/test_hub_names_differential.py).
TEST_CASE("parse_repo_key takes what validate_repo_id takes, one part or two", "[server][repo_key]") {
  auto key = parse_repo_key(RepoType::kKernel, "acme/rms-norm");
  REQUIRE(key);
  CHECK(key->type == RepoType::kKernel);
  CHECK(key->ns == "acme");
  CHECK(key->name == "rms-norm");
  CHECK(key->id() == "acme/rms-norm");
  CHECK(parse_repo_key(RepoType::kModel, "gpt2")->id() == "gpt2");
  CHECK(parse_repo_key(RepoType::kModel, "acme.git/x")->ns == "acme.git");
  const std::string part96(96, 'a');
  CHECK(parse_repo_key(RepoType::kModel, part96 + "/" + part96));
  for (const std::string bad : {"a/b/c", "a--b/c", "-a/b", "a/b.git", "a/..", "a/b c", "", "/b", "a/"}) {
    INFO(bad);
    const auto refused = parse_repo_key(RepoType::kModel, bad);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code == kernelhub::ErrorCode::kInvalidArgument);
  }
}
