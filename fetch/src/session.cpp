#include "kernelhub/fetch/internal/session.hpp"

#include "kernelhub/base/internal/state_dir.hpp"

namespace kernelhub {

Session::Session(SessionOptions options)
    : transport_(options.transport ? std::move(options.transport) : client::make_curl_transport()),
      settings_(std::move(options.settings)),
      trees_(std::make_shared<client::ParsedTrees>(options.max_parsed_trees)),
      trusted_(std::make_unique<TrustedPublishers>()),
      verified_(std::make_unique<VerifiedDirs>()),
      signatures_(std::make_unique<VerifiedSignatures>()) {}

Session& Session::process_default() {
  // Never destroyed (session.hpp, Lifetime): released on purpose, and reachable until exit.
  static Session* const session = std::make_unique<Session>().release();
  return *session;
}

Result<client::Settings> Session::settings(const EnvironmentSource& env) const {
  if (settings_) return *settings_;
  return client::Settings::from_env(env);
}

client::HubClient Session::hub_client(client::Settings settings) const {
  return client::HubClient(std::move(settings), transport_, trees_);
}

VerificationStamps Session::verification_stamps(const EnvironmentSource& env) const {
  // A malformed KERNELHUB_TEST_CLOCK_AHEAD_S is refused where the client's settings are read.
  auto clock = clock_from(env);
  return VerificationStamps(state_dir_from(env), verified_.get(), VerificationStamps::kRacyWindow,
                            clock ? *clock : real_clock());
}

SignatureRecords Session::signature_records(const EnvironmentSource& env) const {
  return SignatureRecords(state_dir_from(env), signatures_.get());
}

}  // namespace kernelhub
