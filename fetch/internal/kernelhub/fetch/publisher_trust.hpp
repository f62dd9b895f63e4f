// Publisher trust, as in the kernels package (hf_hub.py `_check_trust_remote_code`): a repo's
// code loads without an explicit opt-in only when the Hub marks its org as a trusted kernel
// publisher (the organization overview). `trusted_repos` and KERNELHUB_TRUSTED (comma-separated
// orgs or org/name repos) are the local allowlist for sites whose Hub has no publisher flag.
// Offline, what is cached was trusted when it was downloaded, so it passes. When the Hub cannot be
// reached, the answer it gave last (a yes, remembered in kernelhub's state directory) stands, and
// the HubClient's fallbacks() say so.
//
// Thread safety: a pure function of its arguments (plus one request through `hub`).
#pragma once

#include <string>
#include <vector>

#include "kernelhub/base/environment_source.hpp"
#include "kernelhub/base/result.hpp"
#include "kernelhub/client/hub_client.hpp"

namespace kernelhub {

// Network: the org overview, unless trusted locally or offline. Errors: kUntrustedPublisher
// saying how to opt in, and the client's errors for the overview request.
Status check_publisher_trust(const client::HubClient& hub, const client::RepoId& repo, bool trust_remote_code,
                             const std::vector<std::string>& trusted_repos, const EnvironmentSource& env);

}  // namespace kernelhub
