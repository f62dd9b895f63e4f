// EnvironmentSource: where configuration reads environment variables from.
//
// Configuration is read once, at the edge, through an EnvironmentSource and passed down as data;
// no layer calls getenv itself. Tests pass a map, so they never patch the process environment.
//
// Thread safety: the process source reads the environment on each call (callers read once and
// keep the result); a map source is immutable.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace kernelhub {

using EnvironmentSource = std::function<std::optional<std::string>(std::string_view name)>;

// The real process environment. An empty value counts as unset, as in huggingface_hub.
EnvironmentSource process_environment();

// A fixed map, for tests and for describing another machine.
EnvironmentSource map_environment(std::map<std::string, std::string, std::less<>> values);

// huggingface_hub's truthy set for boolean variables: 1, ON, YES, TRUE (any case).
bool is_truthy(const std::optional<std::string>& value);

}  // namespace kernelhub
