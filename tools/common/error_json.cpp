#include "error_json.hpp"

namespace kernelhub::cli {

nlohmann::json error_json(const Error& error) {
  nlohmann::json body{{"code", to_string(error.code)}, {"message", error.message}};
  if (error.missing != Missing::kUnspecified) body["missing"] = to_string(error.missing);
  if (error.network != NetworkFailure::kUnspecified) body["network"] = to_string(error.network);
  return {{"error", std::move(body)}};
}

}  // namespace kernelhub::cli
