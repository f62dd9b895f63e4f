// Publisher trust, as in the kernels package (hf_hub.py `_check_trust_remote_code`): a repo's
// code loads without an explicit opt-in only when the Hub marks its org as a trusted kernel
// publisher (the organization overview). `trusted_repos` and KERNELHUB_TRUSTED (comma-separated
// orgs or org/name repos) are the local allowlist for sites whose Hub has no publisher flag.
// Offline, what is cached was trusted when it was downloaded, so it passes. When the Hub cannot be
// reached, the answer it gave last (a yes, remembered in kernelhub's state directory) stands, and
// the HubClient's fallbacks() say so.
//
// A yes from the Hub is kept in a TrustedPublishers (a Session's, session.hpp), so a repeated
// get_kernel makes no second request for it; a no is asked again next time.
//
// Thread safety: check_publisher_trust is a function of its arguments (plus one request through
// `hub`); TrustedPublishers may be used from several threads at once.
#pragma once

#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "kernelhub/base/environment_source.hpp"
#include "kernelhub/base/result.hpp"
#include "kernelhub/client/internal/hub_client.hpp"

namespace kernelhub {

// The orgs a Hub said it trusts as kernel publishers, by endpoint.
class TrustedPublishers {
 public:
  bool contains(std::string_view endpoint, std::string_view org) const;
  void add(std::string_view endpoint, std::string_view org);

 private:
  static std::string key(std::string_view endpoint, std::string_view org);
  mutable std::mutex mutex_;
  std::set<std::string, std::less<>> trusted_;  // "<endpoint> <org>"
};

// Network: the org overview, unless trusted locally, offline, or already in `answers` (where a
// yes is added). Errors: kUntrustedPublisher saying how to opt in, and the client's errors for
// the overview request.
Status check_publisher_trust(const client::HubClient& hub, const client::RepoId& repo, bool trust_remote_code,
                             const std::vector<std::string>& trusted_repos, const EnvironmentSource& env,
                             TrustedPublishers& answers);

}  // namespace kernelhub
