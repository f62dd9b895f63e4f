// resolve_commit: a request's revision or v<N> as every fetch resolves it (fetch.hpp's `resolve`
// step), for a command that fetches otherwise (`kernelhub download`): one answer to a version the
// repo does not have, `Version 7 of ... not found, available versions: v1` (kNotFound,
// Missing::kVersion), whatever command asks.
#pragma once

#include <string>

#include "kernelhub/base/result.hpp"
#include "kernelhub/client/internal/hub_client.hpp"
#include "kernelhub/fetch/internal/fetch.hpp"

namespace kernelhub {

// REQUIRES: request.revision or request.version. Errors: those of HubClient::resolve_revision, a
// missing version and an offline miss, each with its Problem (problem.hpp).
Result<std::string> resolve_commit(const client::HubClient& hub, const client::RepoId& repo,
                                   const FetchRequest& request);

}  // namespace kernelhub
