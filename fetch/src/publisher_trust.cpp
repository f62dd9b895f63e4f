#include "kernelhub/publisher_trust.hpp"

#include <algorithm>
#include <mutex>
#include <set>

namespace kernelhub {

namespace {

// Whether the Hub marks `org` as a trusted kernel publisher. A yes is kept for the life of the
// process (per endpoint), so a repeated get_kernel makes no second request for it; a no is
// asked again next time.
Result<bool> trusted_publisher(const client::HubClient& hub, const std::string& org) {
  static std::mutex mutex;
  static std::set<std::string> trusted;  // "<endpoint> <org>"
  const std::string key = hub.settings().endpoint + " " + org;
  {
    std::lock_guard lock(mutex);
    if (trusted.contains(key)) return true;
  }
  KH_ASSIGN_OR_RETURN(bool answer, hub.is_trusted_publisher(org));
  if (answer) {
    std::lock_guard lock(mutex);
    trusted.insert(key);
  }
  return answer;
}

}  // namespace

// The publisher trust check (kernels hf_hub.py `_check_trust_remote_code`), plus a local allowlist.
Status check_publisher_trust(const client::HubClient& hub, const client::RepoId& repo, bool trust_remote_code,
                             const std::vector<std::string>& trusted_repos, const EnvironmentSource& env) {
  if (trust_remote_code) return {};
  const std::string id = repo.to_string();
  auto listed = [&](std::string_view entry) { return entry == id || entry == repo.org; };
  if (std::any_of(trusted_repos.begin(), trusted_repos.end(), listed)) return {};
  if (auto allow = env("KERNELHUB_TRUSTED")) {
    std::string_view rest = *allow;
    while (!rest.empty()) {
      const std::size_t comma = rest.find(',');
      if (listed(rest.substr(0, comma))) return {};
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  if (hub.settings().offline) return {};  // trusted when it was downloaded, as in the kernels package
  KH_ASSIGN_OR_RETURN(bool trusted, trusted_publisher(hub, repo.org));
  if (trusted) return {};
  return unexpected(ErrorCode::kUntrustedPublisher,
                    "`" + id + "` is published by `" + repo.org +
                        "`, which the Hub does not mark as a trusted kernel publisher, so its code is not loaded. "
                        "If you trust it, pass trust_remote_code (CLI: --trust-remote-code) or add `" +
                        id + "` to KERNELHUB_TRUSTED");
}

}  // namespace kernelhub
