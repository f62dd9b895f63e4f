#include "kernelhub/signing/internal/trusted_keys.hpp"

#include <catch2/catch.hpp>

#include "signing_fixture.hpp"

namespace kernelhub::signing {
namespace {

using testing::TempDir;

const std::string kPublisher = testing::publisher_key().public_key().to_base64();
const std::string kOther = testing::other_key().public_key().to_base64();

TEST_CASE("a key trusted for an org covers its repos; one for a repo covers only that repo") {
  TrustedKeys keys;
  REQUIRE(keys.add("acme", testing::publisher_key().public_key()).has_value());
  REQUIRE(keys.add("bob/kernels", testing::other_key().public_key()).has_value());
  CHECK(keys.for_repo("acme/anything").size() == 1);
  CHECK(keys.for_repo("acme2/anything").empty());  // an org is not a prefix
  CHECK(keys.for_repo("bob/kernels").size() == 1);
  CHECK(keys.for_repo("bob/other").empty());
  CHECK_FALSE(keys.add("", testing::other_key().public_key()).has_value());
  CHECK_FALSE(keys.add("a/b/c", testing::other_key().public_key()).has_value());
  CHECK_FALSE(keys.add("../x", testing::other_key().public_key()).has_value());
}

TEST_CASE("KERNELHUB_TRUSTED_KEYS: scope=KEY entries, base64 or a key file") {
  TempDir temp;
  testing::write_file(temp.path() / "bob.pub", testing::other_key().public_key().to_pem());
  TrustedKeys keys;
  REQUIRE(keys.add_from_variable("acme=" + kPublisher + " , bob/kernels=" + (temp.path() / "bob.pub").string())
              .has_value());
  REQUIRE(keys.entries().size() == 2);
  CHECK(keys.for_repo("acme/x").front().key == testing::publisher_key().public_key());
  CHECK(keys.for_repo("bob/kernels").front().key == testing::other_key().public_key());
  CHECK(keys.for_repo("acme/x").front().origin == "KERNELHUB_TRUSTED_KEYS");
}

TEST_CASE("a malformed trusted key entry is an error, never skipped") {
  for (const std::string& bad : {std::string("acme"), std::string("acme="), std::string("acme=notakey"),
                                 "=" + kPublisher, "a b=" + kPublisher, "acme=" + kPublisher.substr(1)}) {
    INFO(bad);
    TrustedKeys keys;
    auto added = keys.add_from_variable(bad);
    REQUIRE_FALSE(added.has_value());
    CHECK(added.error().code == ErrorCode::kInvalidArgument);
    CHECK_THAT(added.error().message, Catch::Contains("KERNELHUB_TRUSTED_KEYS"));
  }
}

TEST_CASE("the trusted_keys file: comments, blank lines, relative key paths; errors name the line") {
  TempDir temp;
  testing::write_file(temp.path() / "keys" / "bob.pub", kOther + "\n");
  TrustedKeys keys;
  const std::string text = "# who may sign what\n\nacme " + kPublisher + "  # the acme CI key\nbob keys/bob.pub\n";
  REQUIRE(keys.add_from_config(text, "trusted_keys", temp.path()).has_value());
  CHECK(keys.for_repo("acme/x").size() == 1);
  CHECK(keys.for_repo("bob/y").front().origin == "trusted_keys:4");
  TrustedKeys bad;
  auto added = bad.add_from_config("acme " + kPublisher + "\nbob\n", "trusted_keys", temp.path());
  REQUIRE_FALSE(added.has_value());
  CHECK_THAT(added.error().message, Catch::Contains("trusted_keys:2"));
}

TEST_CASE("from_environment reads $XDG_CONFIG_HOME/kernelhub/trusted_keys and the variable") {
  TempDir temp;
  testing::write_file(temp.path() / "kernelhub" / "trusted_keys", "acme " + kPublisher + "\n");
  auto keys = TrustedKeys::from_environment(
      map_environment({{"XDG_CONFIG_HOME", temp.path().string()}, {"KERNELHUB_TRUSTED_KEYS", "bob=" + kOther}}));
  REQUIRE(keys.has_value());
  CHECK(keys->entries().size() == 2);
  CHECK(TrustedKeys::config_path(map_environment({{"HOME", "/home/u"}})) ==
        std::filesystem::path("/home/u/.config/kernelhub/trusted_keys"));
  auto none = TrustedKeys::from_environment(map_environment({{"XDG_CONFIG_HOME", (temp.path() / "nothing").string()}}));
  REQUIRE(none.has_value());
  CHECK(none->empty());
}

}  // namespace
}  // namespace kernelhub::signing
