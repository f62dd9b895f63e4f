// A cheap pre-check before parsing untrusted JSON: nlohmann's parser recurses once per nesting
// level, so a hostile `[[[[…` of a few megabytes would exhaust the stack. Callers refuse input
// nested deeper than they could legitimately need before handing it to the parser.
//
// Thread safety: a pure function.
#pragma once

#include <string_view>

namespace kernelhub {

// Whether no array or object in `json` is nested more than `max_depth` levels deep. Brackets
// inside strings (escapes included) do not count. Malformed input is left to the parser.
bool json_nesting_within(std::string_view json, int max_depth);

}  // namespace kernelhub
