// CountingTransport: the real transport (libcurl), counting every request the Hub client starts,
// so that tests can assert what reached the network (one try, no retry, nothing at all).
#pragma once

#include <atomic>
#include <memory>

#include "kernelhub/client/internal/transport.hpp"

namespace kernelhub::testing {

class CountingTransport final : public client::Transport {
 public:
  explicit CountingTransport(std::shared_ptr<client::Transport> target = client::make_curl_transport())
      : target_(std::move(target)) {}
  void run(client::Workload& work, int max_parallel) override;
  int count() const { return count_; }

 private:
  std::shared_ptr<client::Transport> target_;
  std::atomic<int> count_{0};
};

}  // namespace kernelhub::testing
