// What `kernelhub download` fetches, one variant (or a whole repo) at a time, with the cache
// checked: every file already cached is hashed against its blob's name and downloaded again when
// it changed in the cache (client::DownloadOptions::verify_cached); --force downloads all of them
// again. The verification stamps of kernelhub's state directory (verification_stamps.hpp) spare
// the files a `get` or an earlier `download` proved unchanged, and what this one hashes is
// recorded for the next.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "kernelhub/base/environment_source.hpp"
#include "kernelhub/base/result.hpp"
#include "kernelhub/client/internal/hub_client.hpp"

namespace kernelhub::cli {

// build/<variant>/ at `commit` (every file of the repo when `variant` is empty). Errors: the
// client's.
Result<client::Snapshot> checked_download(const client::HubClient& hub, const client::RepoId& repo,
                                          const std::string& commit, const std::string& variant,
                                          client::DownloadOptions options, const EnvironmentSource& env);

// The files a download found changed in the cache and replaced, for --json: [{path, blob, found}].
nlohmann::json repaired_json(const client::Snapshot& snapshot);

// Says on stderr each file a download replaced: "<command>: repaired `<path>`: ...".
void say_repaired(std::string_view command, const client::Snapshot& snapshot);

}  // namespace kernelhub::cli
