#include "client_state.hpp"

#include <algorithm>

namespace kernelhub::client {

std::optional<Error> ClientState::given_up(const std::string& origin) const {
  std::lock_guard lock(mutex_);
  const auto it = given_up_.find(origin);
  return it == given_up_.end() ? std::nullopt : std::optional(it->second);
}

void ClientState::give_up(const std::string& origin, const Error& why) {
  std::lock_guard lock(mutex_);
  given_up_.try_emplace(origin, why);
}

void ClientState::fallback(std::string note) {
  std::lock_guard lock(mutex_);
  if (std::find(fallbacks_.begin(), fallbacks_.end(), note) == fallbacks_.end()) fallbacks_.push_back(std::move(note));
}

std::vector<std::string> ClientState::fallbacks() const {
  std::lock_guard lock(mutex_);
  return fallbacks_;
}

}  // namespace kernelhub::client
