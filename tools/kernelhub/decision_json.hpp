// One variant decision in --json output (`kernelhub variants`, `kernelhub get`):
// {"variant", "accepted", "reason", "code"}, reason being the sentence the text output prints
// and code its stable name ("torch_version", "no_code_for_gpu", ...; resolver/reason.hpp), so that
// a script can tell why a variant was rejected without reading prose.
#pragma once

#include <nlohmann/json.hpp>

#include "kernelhub/resolver/select.hpp"

namespace kernelhub::cli {

nlohmann::json decision_to_json(const resolver::Decision& decision);

}  // namespace kernelhub::cli
