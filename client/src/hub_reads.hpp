// The Hub's answers that a download builds on, asked on one HubCall (hub_call.hpp): what a
// revision names (the revision API, refs/), and what a commit lists (the tree API, trees/,
// snapshots/). HubClient::resolve_revision and HubClient::tree are these on a call of their own
// (hub_client.cpp); the downloads (file_download.cpp) ask them on the call that then fetches the
// files, so that its settings (cache only) and its request count hold for both.
#pragma once

#include <string>
#include <string_view>

#include "hub_call.hpp"
#include "kernelhub/base/result.hpp"
#include "kernelhub/client/internal/repo_tree.hpp"
#include "kernelhub/client/repo_id.hpp"

namespace kernelhub::client {

// The commit `revision` names: itself when it is one, else the revision API (recorded in
// refs/<revision>), else refs/ (offline, or when the Hub cannot be reached).
Result<std::string> resolve_commit(HubCall& call, const RepoId& repo, RepoType type, std::string_view revision);

// The files at `commit`: kept in the client's ParsedTrees, trees/<commit>.json, the tree API
// (paginated, then cached), or rebuilt from snapshots/<commit>/ offline or when the Hub cannot
// be reached. REQUIRES: is_commit_hash(commit).
Result<RepoTree> list_tree(HubCall& call, const RepoId& repo, RepoType type, std::string_view commit);

}  // namespace kernelhub::client
