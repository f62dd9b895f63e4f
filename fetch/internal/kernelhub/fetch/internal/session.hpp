// Session: what the fetches of one process share, and the one place that state lives.
//
// A Session owns
//   - the transport: one libcurl transport (client/transport.hpp) whose pooled multi handles keep
//     their connections open, so a repeated get_kernel reuses the connection of the last one
//     instead of opening a new one (and, over TLS, shaking hands again);
//   - the Hub settings it was made with, when it was made with any (else each fetch reads them
//     from its own environment, so HF_ENDPOINT or HF_HUB_CACHE set between two calls applies);
//   - the parsed listings (client/parsed_trees.hpp): a commit's listing never changes;
//   - the publisher trust answers (publisher_trust.hpp): a trusted org is asked once;
//   - the verification records (verification_stamps.hpp): a verified directory whose files keep
//     their stamps is not hashed again;
//   - the signers of the signature bundles it verified (signature_check.hpp): a repeated load
//     checks the policy against them, not the bundle's cryptography again.
// What a single fetch learns (its request count, a Hub given up on, fallbacks) stays with that
// fetch's HubClient: a Hub that was down for one call is asked again by the next.
//
// Per-process state: Session::process_default() is the one every get_kernel,
// tvm_ffi::get_kernel and the Python binding use unless given another (FetchContext::session, the
// get_kernel overload of kernelhub/internal/kernelhub/internal/load.hpp); tests and benchmarks make their
// own, with a fake transport or fixed settings. Beside it only facts of the process itself are
// kept process-wide: libcurl's global init, the machine's GPUs (resolver/cuda_probe.hpp), the
// interpreter's facts in the Python binding, and the loaders' maps of what dlopen has loaded
// (loader/, tvm_ffi_loader/), which mirror the dynamic linker's own process-wide state.
//
// Lifetime: a Session lives as long as its last holder; a fetch holds the one it uses until it
// returns. The process default is made on first use and never destroyed, so a fetch running while
// the process exits (a Python daemon thread) never meets a destroyed one. After fork(), the child
// opens connections of its own (the parent's stay the parent's); the caches carry over, as they
// describe files both processes see.
//
// Thread safety: every method may be called from several threads at once; fetches through one
// Session run in parallel.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include "kernelhub/base/environment_source.hpp"
#include "kernelhub/base/result.hpp"
#include "kernelhub/client/internal/hub_client.hpp"
#include "kernelhub/client/internal/parsed_trees.hpp"
#include "kernelhub/client/internal/settings.hpp"
#include "kernelhub/client/internal/transport.hpp"
#include "kernelhub/fetch/internal/publisher_trust.hpp"
#include "kernelhub/fetch/internal/signature_check.hpp"
#include "kernelhub/fetch/internal/verification_stamps.hpp"

namespace kernelhub {

struct SessionOptions {
  std::shared_ptr<client::Transport> transport;  // none: libcurl (client::make_curl_transport)
  std::optional<client::Settings> settings;      // none: each fetch's, from its environment
  std::size_t max_parsed_trees = 64;             // listings kept, the oldest dropped first
};

class Session {
 public:
  explicit Session(SessionOptions options = {});
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // The process's Session (see above), made on first use.
  static Session& process_default();

  // The Hub settings of a fetch: the Session's own, else read from `env`.
  // Errors: those of client::Settings::from_env.
  Result<client::Settings> settings(const EnvironmentSource& env) const;

  // A client for one fetch: the Session's transport and listings; its own request count,
  // fallbacks and hosts given up on.
  client::HubClient hub_client(client::Settings settings) const;

  // The verification stamps of a fetch: stamp files in `env`'s state directory, remembered in
  // this Session.
  VerificationStamps verification_stamps(const EnvironmentSource& env) const;

  // The signature records of a fetch: files in `env`'s state directory, remembered in this Session.
  SignatureRecords signature_records(const EnvironmentSource& env) const;

  TrustedPublishers& trusted_publishers() const { return *trusted_; }

  // TCP connections opened so far by the Session's transport (0 where it cannot tell).
  std::uint64_t connections_opened() const { return transport_->connections_opened(); }

 private:
  std::shared_ptr<client::Transport> transport_;
  std::optional<client::Settings> settings_;
  std::shared_ptr<client::ParsedTrees> trees_;
  std::unique_ptr<TrustedPublishers> trusted_;
  std::unique_ptr<VerifiedDirs> verified_;
  std::unique_ptr<VerifiedSignatures> signatures_;
};

}  // namespace kernelhub
