// The --json form of a failed command: {"error": {"code", "message"[, "missing"][, "network"]}},
// code being the ErrorCode's stable name, missing, for not_found, what was not found (repo,
// revision, version, file), so that a script can tell a typo in a repo id from a missing tag
// without reading prose, and network, for network, how the Hub failed (unreachable, no_answer,
// cut).
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "kernelhub/base/error.hpp"

namespace kernelhub::cli {

nlohmann::json error_json(const Error& error);

// Reports a failed command: with `json`, error_json() on stdout; else `<command>: <message>` on
// stderr. Returns `status` (kExitFailure, or kExitUsage where the command could not start).
int report_failure(const Error& error, bool json, std::string_view command, int status);

}  // namespace kernelhub::cli
