#include "error_json.hpp"

#include <cstdio>

#include "cli_words.hpp"
#include "kernelhub/base/internal/printable.hpp"

namespace kernelhub::cli {

nlohmann::json error_json(const Error& error) {
  nlohmann::json body{{"code", to_string(error.code)}, {"message", cli_message(error)}};
  if (error.missing != Missing::kUnspecified) body["missing"] = to_string(error.missing);
  if (error.network != NetworkFailure::kUnspecified) body["network"] = to_string(error.network);
  return {{"error", std::move(body)}};
}

int report_failure(const Error& error, bool json, std::string_view command, int status) {
  if (json) {
    std::printf("%s\n", error_json(error).dump(2).c_str());
  } else {
    std::fprintf(stderr, "%.*s: %s\n", static_cast<int>(command.size()), command.data(),
                 printable(cli_message(error)).c_str());
  }
  return status;
}

}  // namespace kernelhub::cli
