#include "decision_json.hpp"

#include <string>

namespace kernelhub::cli {

nlohmann::json decision_to_json(const resolver::Decision& decision) {
  return {{"variant", decision.name},
          {"accepted", decision.accepted()},
          {"reason", resolver::to_string(decision.reason)},
          {"code", std::string(resolver::code_name(resolver::reason_code(decision.reason)))}};
}

}  // namespace kernelhub::cli
