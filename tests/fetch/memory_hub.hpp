// MemoryHub: a Hub held in memory behind the Transport seam (client/transport.hpp), for tests of
// the fetch stage that need no socket: each URL (its query left out) has one answer, and every
// request that reaches it is recorded.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "kernelhub/client/internal/transport.hpp"

namespace kernelhub::testing {

class MemoryHub final : public client::Transport {
 public:
  struct Answer {
    int status = 200;
    std::vector<client::Header> headers;  // lower-case names, as a transport gives them
    std::string body;
  };

  // `url` answers `answer` from now on (a URL without an answer: 404, as the Hub's EntryNotFound).
  void serve(const std::string& url, Answer answer);
  // "GET <url>" for each request, in the order they came.
  std::vector<std::string> requests() const;

  void run(client::Workload& work, int max_parallel) override;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, Answer> answers_;
  std::vector<std::string> requests_;
};

}  // namespace kernelhub::testing
