// Request bodies as JSON, with the nesting bound every route needs: no body the Hub protocol
// defines is nested more than a few levels, and a hostile `[[[[…` of a few megabytes (bodies are
// capped by ServerOptions::max_body_bytes, not by depth) must not reach the parser.
//
// Thread safety: a pure function.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

namespace kernelhub::server {

inline constexpr int kMaxRequestJsonDepth = 16;

// The parsed body, or a discarded value (`is_discarded()`) when it is not JSON or nested deeper
// than kMaxRequestJsonDepth. Never throws.
nlohmann::json parse_request_json(std::string_view body);

}  // namespace kernelhub::server
