// TcpRelay: a loopback TCP relay that counts the connections it accepts. A test points a client
// at it (instead of at a server on loopback) to learn how many TCP connections the client opened,
// whatever the server and the client are: each accepted connection is relayed to the target port
// on 127.0.0.1, byte for byte, until either side closes it.
//
// Thread safety: accepted() may be called from any thread. Lifetime: the destructor stops
// accepting, closes every relayed connection and joins its threads.
#pragma once

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kernelhub/base/internal/unique_fd.hpp"

namespace kernelhub::testing {

class TcpRelay {
 public:
  explicit TcpRelay(int target_port);
  ~TcpRelay();
  TcpRelay(const TcpRelay&) = delete;
  TcpRelay& operator=(const TcpRelay&) = delete;

  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // Connections accepted so far.
  int accepted() const { return accepted_.load(); }

 private:
  void accept_loop();
  void relay(UniqueFd client) const;

  int target_port_;
  int port_ = 0;
  UniqueFd listener_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> accepted_{0};
  std::mutex mutex_;
  std::vector<std::thread> relays_;
  std::thread acceptor_;
};

}  // namespace kernelhub::testing
