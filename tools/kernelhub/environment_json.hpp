// The environment as JSON, shared by `kernelhub env --json` and the other commands' --json output.
#pragma once

#include <nlohmann/json.hpp>

#include "kernelhub/resolver/environment.hpp"

namespace kernelhub::cli {

nlohmann::json environment_to_json(const resolver::Environment& e);

}  // namespace kernelhub::cli
