#include "kernelhub/base/environment_source.hpp"

#include <catch2/catch.hpp>

namespace kernelhub {
namespace {

TEST_CASE("map_environment treats empty values as unset, like huggingface_hub") {
  const auto env = map_environment({{"A", "1"}, {"EMPTY", ""}});
  CHECK(env("A") == std::optional<std::string>("1"));
  CHECK_FALSE(env("EMPTY").has_value());
  CHECK_FALSE(env("MISSING").has_value());
}

TEST_CASE("is_truthy accepts huggingface_hub's truthy set, any case") {
  for (const char* yes : {"1", "ON", "yes", "True", "TRUE"}) CHECK(is_truthy(std::string(yes)));
  for (const char* no : {"0", "off", "false", "", "2"}) CHECK_FALSE(is_truthy(std::string(no)));
  CHECK_FALSE(is_truthy(std::nullopt));
}

}  // namespace
}  // namespace kernelhub
