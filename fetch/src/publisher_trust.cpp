#include "kernelhub/fetch/internal/publisher_trust.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <nlohmann/json.hpp>

#include "kernelhub/base/internal/atomic_file.hpp"
#include "kernelhub/base/internal/json_nesting.hpp"
#include "kernelhub/base/internal/read_file.hpp"
#include "kernelhub/base/internal/state_dir.hpp"
#include "kernelhub/fetch/internal/verification_stamps.hpp"

namespace kernelhub {

namespace {

// The publishers the Hub last said it trusts, by "<endpoint> <org>", with when it said so (Unix
// seconds): `trusted-publishers.json` in kernelhub's state directory (verification_stamps.hpp: the
// user's own, never the shared cache), so that a load of what is cached does not depend on the Hub
// being up. Best effort: a file that is missing or malformed remembers nothing.
class RememberedTrust {
 public:
  explicit RememberedTrust(const EnvironmentSource& env) {
    if (auto dir = state_dir_from(env)) file_ = *dir / "trusted-publishers.json";
  }

  std::optional<std::int64_t> when_trusted(const std::string& key) const {
    const auto doc = read();
    const auto it = doc.find(key);
    if (it == doc.end() || !it->is_number_integer()) return std::nullopt;
    return it->get<std::int64_t>();
  }

  void trusted_now(const std::string& key) const {
    if (file_.empty()) return;
    auto doc = read();
    doc[key] = static_cast<std::int64_t>(std::time(nullptr));
    std::error_code ec;
    if (std::filesystem::create_directories(file_.parent_path(), ec)) ::chmod(file_.parent_path().c_str(), 0700);
    (void)write_file_atomic(file_, doc.dump(1) + "\n", {.mode = 0600});
  }

 private:
  nlohmann::json read() const {
    if (file_.empty()) return nlohmann::json::object();
    auto text = read_file(file_);
    if (!text || text->size() > (1u << 20) || !json_nesting_within(*text, 4)) return nlohmann::json::object();
    auto doc = nlohmann::json::parse(*text, nullptr, false);
    return doc.is_object() ? doc : nlohmann::json::object();
  }

  std::filesystem::path file_;
};

std::string utc_time(std::int64_t seconds) {
  const std::time_t t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M UTC", &tm);
  return text;
}

// Whether the Hub marks `org` as a trusted kernel publisher. A yes is kept in `answers` (per
// endpoint), so a repeated get_kernel makes no second request for it, and on disk, where it
// answers when the Hub cannot be reached (said through the client's fallbacks); a no is asked
// again next time.
Result<bool> trusted_publisher(const client::HubClient& hub, const std::string& org, const EnvironmentSource& env,
                               TrustedPublishers& answers) {
  const std::string& endpoint = hub.settings().endpoint;
  if (answers.contains(endpoint, org)) return true;
  const std::string key = endpoint + " " + org;
  const RememberedTrust remembered(env);
  auto answer = hub.is_trusted_publisher(org);
  if (!answer) {
    if (answer.error().code != ErrorCode::kNetwork) return answer;
    if (auto when = remembered.when_trusted(key)) {
      hub.note_fallback("the Hub could not be asked whether `" + org + "` is a trusted kernel publisher; it was on " +
                        utc_time(*when) + ", when last asked");
      return true;
    }
    Error error = answer.error();
    error.message = "cannot check whether `" + org +
                    "` is a trusted kernel publisher (no earlier answer is remembered; if you trust it, pass "
                    "trust_remote_code, CLI: --trust-remote-code): " +
                    error.message;
    return unexpected(std::move(error));
  }
  if (*answer) {
    remembered.trusted_now(key);
    answers.add(endpoint, org);
  }
  return answer;
}

}  // namespace

std::string TrustedPublishers::key(std::string_view endpoint, std::string_view org) {
  return std::string(endpoint) + " " + std::string(org);
}

bool TrustedPublishers::contains(std::string_view endpoint, std::string_view org) const {
  std::lock_guard lock(mutex_);
  return trusted_.contains(key(endpoint, org));
}

void TrustedPublishers::add(std::string_view endpoint, std::string_view org) {
  std::lock_guard lock(mutex_);
  trusted_.insert(key(endpoint, org));
}

// The publisher trust check (kernels hf_hub.py `_check_trust_remote_code`), plus a local allowlist.
Status check_publisher_trust(const client::HubClient& hub, const client::RepoId& repo, bool trust_remote_code,
                             const std::vector<std::string>& trusted_repos, const EnvironmentSource& env,
                             TrustedPublishers& answers) {
  if (trust_remote_code) return {};
  const std::string id = repo.to_string();
  auto listed = [&](std::string_view entry) { return entry == id || entry == repo.org; };
  if (std::any_of(trusted_repos.begin(), trusted_repos.end(), listed)) return {};
  if (auto allow = env(env_vars::kKernelhubTrusted)) {
    std::string_view rest = *allow;
    while (!rest.empty()) {
      const std::size_t comma = rest.find(',');
      if (listed(rest.substr(0, comma))) return {};
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  if (hub.settings().offline) return {};  // trusted when it was downloaded, as in the kernels package
  KH_ASSIGN_OR_RETURN(bool trusted, trusted_publisher(hub, repo.org, env, answers));
  if (trusted) return {};
  return unexpected(ErrorCode::kUntrustedPublisher,
                    "`" + id + "` is published by `" + repo.org +
                        "`, which the Hub does not mark as a trusted kernel publisher, so its code is not loaded. "
                        "If you trust it, pass trust_remote_code (CLI: --trust-remote-code) or add `" +
                        id + "` to KERNELHUB_TRUSTED");
}

}  // namespace kernelhub
