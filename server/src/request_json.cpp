#include "request_json.hpp"

#include "kernelhub/base/internal/json_nesting.hpp"

namespace kernelhub::server {

nlohmann::json parse_request_json(std::string_view body) {
  if (!json_nesting_within(body, kMaxRequestJsonDepth)) return nlohmann::json(nlohmann::json::value_t::discarded);
  return nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
}

}  // namespace kernelhub::server
