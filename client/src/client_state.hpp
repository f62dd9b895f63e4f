// ClientState: what one HubClient (and its copies) has learnt while it works, shared by all its
// calls and threads:
//   - every HTTP request it made (HubClient::requests());
//   - the hosts it gave up on: one that could not be reached (refused, no route, no such name,
//     connect timeout) or accepted a request and sent no answer within the timeout is not asked
//     again by this client, so a Hub that is down costs one timeout, not one per request and
//     retry; later requests to it fail at once with the first failure;
//   - what was answered from the cache because of that (HubClient::fallbacks()), for the caller to
//     say;
//   - where the listings it parsed are kept (parsed_trees.hpp: its Session's, else its own).
//
// Thread safety: every method may be called from several threads at once.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "kernelhub/base/error.hpp"
#include "kernelhub/client/internal/parsed_trees.hpp"

namespace kernelhub::client {

class ClientState {
 public:
  explicit ClientState(std::shared_ptr<ParsedTrees> trees) : trees_(std::move(trees)) {}

  void count_request() { ++requests_; }
  int requests() const { return requests_; }

  // The failure that made this client give up on `origin`, if it did.
  std::optional<Error> given_up(const std::string& origin) const;
  // Records the first failure that gives up on `origin` (later ones keep the first).
  void give_up(const std::string& origin, const Error& why);

  // One sentence about an answer taken from the cache instead of the Hub; each said once.
  void fallback(std::string note);
  std::vector<std::string> fallbacks() const;

  ParsedTrees& trees() const { return *trees_; }

 private:
  std::shared_ptr<ParsedTrees> trees_;
  std::atomic<int> requests_{0};
  mutable std::mutex mutex_;
  std::map<std::string, Error, std::less<>> given_up_;
  std::vector<std::string> fallbacks_;
};

}  // namespace kernelhub::client
