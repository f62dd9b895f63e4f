#include "kernelhub/base/environment_source.hpp"

#include <stdlib.h>

#include <catch2/catch.hpp>
#include <set>
#include <stdexcept>

#include "kernelhub/base/environment_variables.hpp"
#include "kernelhub/base/internal/boolean_variable.hpp"

namespace kernelhub {
namespace {

TEST_CASE("map_environment treats empty values as unset, like huggingface_hub") {
  const auto env = map_environment({{"HF_HOME", "/h"}, {"HF_TOKEN", ""}});
  CHECK(env("HF_HOME") == std::optional<std::string>("/h"));
  CHECK_FALSE(env("HF_TOKEN").has_value());
  CHECK_FALSE(env("HF_ENDPOINT").has_value());
}

TEST_CASE("a name outside the table is a programming error, in a lookup and in a map") {
  const auto env = map_environment({});
  CHECK_THROWS_WITH(env("KERNELHUB_NO_SUCH_VARIABLE"),
                    Catch::Contains("KERNELHUB_NO_SUCH_VARIABLE") && Catch::Contains("environment_variables.cpp"));
  CHECK_THROWS_AS(map_environment({{"HF_HOMEE", "/h"}}), std::logic_error);
  CHECK_THROWS_AS(env.with("TORCH", "2.9"), std::logic_error);
  CHECK_THROWS_AS(process_environment()("LANG"), std::logic_error);
}

TEST_CASE("the process environment is read once, when the source is made") {
  ::setenv("KERNELHUB_TORCH", "2.9", 1);
  const EnvironmentSource before = process_environment();
  ::setenv("KERNELHUB_TORCH", "2.10", 1);
  ::setenv("KERNELHUB_PYTHON", "3.12", 1);
  CHECK(before("KERNELHUB_TORCH") == std::optional<std::string>("2.9"));
  CHECK_FALSE(before("KERNELHUB_PYTHON").has_value());
  const EnvironmentSource after = process_environment();
  CHECK(after("KERNELHUB_TORCH") == std::optional<std::string>("2.10"));
  CHECK(after("KERNELHUB_PYTHON") == std::optional<std::string>("3.12"));
  ::unsetenv("KERNELHUB_TORCH");
  ::unsetenv("KERNELHUB_PYTHON");
  CHECK(after("KERNELHUB_TORCH") == std::optional<std::string>("2.10"));
}

TEST_CASE("with() sets one variable in a copy and leaves the source as it was") {
  const auto env = map_environment({{"KERNELHUB_TORCH", "2.9"}, {"HF_HOME", "/h"}});
  const auto flagged = env.with(env_vars::kKernelhubTorch, "2.10");
  CHECK(flagged("KERNELHUB_TORCH") == std::optional<std::string>("2.10"));
  CHECK(flagged("HF_HOME") == std::optional<std::string>("/h"));
  CHECK(env("KERNELHUB_TORCH") == std::optional<std::string>("2.9"));
}

TEST_CASE("the table lists each variable once, with its meaning, default and readers") {
  std::set<std::string_view> names;
  for (const EnvironmentVariable& v : environment_variables()) {
    INFO(v.name);
    CHECK(names.insert(v.name).second);
    CHECK(find_environment_variable(v.name) == &v);
    CHECK_FALSE(v.meaning.empty());
    CHECK_FALSE(v.default_value.empty());
    CHECK_FALSE(v.read_by.empty());
  }
  CHECK(find_environment_variable("PWD") == nullptr);
  // A token's value is never printed.
  CHECK(find_environment_variable(env_vars::kHfToken)->secret);
  CHECK(find_environment_variable(env_vars::kHuggingFaceHubToken)->secret);
  CHECK_FALSE(find_environment_variable(env_vars::kHfHome)->secret);
}

TEST_CASE("is_truthy accepts huggingface_hub's truthy set, any case") {
  for (const char* yes : {"1", "ON", "yes", "True", "TRUE"}) CHECK(is_truthy(std::string(yes)));
  for (const char* no : {"0", "off", "false", "", "2"}) CHECK_FALSE(is_truthy(std::string(no)));
  CHECK_FALSE(is_truthy(std::nullopt));
}

TEST_CASE("flag_or: the truthy set is on, its opposites off, anything else the default") {
  for (const char* yes : {"1", "ON", "yes", "True"}) CHECK(flag_or(std::string(yes), false));
  for (const char* no : {"0", "OFF", "no", "False"}) CHECK_FALSE(flag_or(std::string(no), true));
  for (const char* other : {"", "2", "maybe"}) {
    CHECK(flag_or(std::string(other), true));
    CHECK_FALSE(flag_or(std::string(other), false));
  }
  CHECK(flag_or(std::nullopt, true));
}

}  // namespace
}  // namespace kernelhub
