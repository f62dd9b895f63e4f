#include "kernelhub/server/internal/access_policy.hpp"

#include <catch2/catch.hpp>

using namespace kernelhub::server;

TEST_CASE("AccessPolicy reads the tokens file format", "[server][access_policy]") {
  auto policy = AccessPolicy::parse(R"({"tokens": {"t1": {"user": "alice", "orgs": ["acme"], "write": true},
                                                   "t2": {"user": "bob"}},
                                        "organizations": {"acme": {"fullname": "Acme", "trustedKernelPublisher": true}}})");
  REQUIRE(policy);
  const TokenInfo* alice = policy->find("t1");
  REQUIRE(alice);
  CHECK(alice->user == "alice");
  CHECK(alice->write);
  CHECK(AccessPolicy::owns(alice, "acme"));
  CHECK(AccessPolicy::owns(alice, "alice"));
  CHECK_FALSE(AccessPolicy::owns(alice, "other"));
  CHECK_FALSE(AccessPolicy::owns(nullptr, "acme"));
  const TokenInfo* bob = policy->find("t2");
  REQUIRE(bob);
  CHECK_FALSE(bob->write);
  CHECK(policy->find("nope") == nullptr);
  CHECK(policy->organization("acme")->trusted_kernel_publisher);
  CHECK(policy->organization("acme")->fullname == "Acme");
  CHECK_FALSE(policy->organization("ghost"));
}

TEST_CASE("AccessPolicy names what is wrong in a bad tokens file", "[server][access_policy]") {
  CHECK(AccessPolicy::parse("not json").error().code == kernelhub::ErrorCode::kCorruptFile);
  CHECK(AccessPolicy::parse(R"({"tokens": {"t": {"orgs": []}}})").error().message ==
        "token entry `t...` needs a string `user`");
  CHECK(AccessPolicy::parse(R"({"tokens": {"t": {"user": "u", "write": "yes"}}})").error().message ==
        "`write` of user `u` must be true/false");
  CHECK(AccessPolicy::load("/nonexistent/tokens.json").error().code == kernelhub::ErrorCode::kNotFound);
}

TEST_CASE("trust_publisher marks an organization trusted", "[server][access_policy]") {
  AccessPolicy policy;
  CHECK_FALSE(policy.organization("kernels-community"));
  policy.trust_publisher("kernels-community");
  CHECK(policy.organization("kernels-community")->trusted_kernel_publisher);
}

TEST_CASE("AccessPolicy reads a token's expiry, and refuses one that is not Unix seconds", "[server][access_policy]") {
  auto policy =
      AccessPolicy::parse(R"({"tokens": {"t1": {"user": "alice", "expires": 1767225600}, "t2": {"user": "bob"}}})");
  REQUIRE(policy);
  CHECK(policy->find("t1")->expires_at == 1767225600);
  CHECK_FALSE(policy->find("t2")->expires_at);
  auto bad = AccessPolicy::parse(R"({"tokens": {"t1": {"user": "alice", "expires": "tomorrow"}}})");
  REQUIRE_FALSE(bad);
  CHECK_THAT(bad.error().message, Catch::Contains("expires"));
}
