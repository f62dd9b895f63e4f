#include "memory_hub.hpp"

#include <thread>

namespace kernelhub::testing {

void MemoryHub::serve(const std::string& url, Answer answer) {
  std::lock_guard lock(mutex_);
  answers_.insert_or_assign(url, std::move(answer));
}

std::vector<std::string> MemoryHub::requests() const {
  std::lock_guard lock(mutex_);
  return requests_;
}

// One request at a time, on the calling thread: enough for a client that may run several.
void MemoryHub::run(client::Workload& work, int) {
  while (!work.done()) {
    auto item = work.next();
    if (!item) {
      work.wait_idle();
      continue;
    }
    const std::string& url = item->request.url;
    Answer answer{404, {{"x-error-code", "EntryNotFound"}, {"x-error-message", "no answer for " + url}}, "{}"};
    {
      std::lock_guard lock(mutex_);
      requests_.push_back(item->request.method + " " + url);
      if (auto it = answers_.find(url.substr(0, url.find('?'))); it != answers_.end()) answer = it->second;
    }
    const bool head = item->request.method == "HEAD";
    if (!item->sink->begin(answer.status, answer.headers) ||
        (!head && !item->sink->write(answer.body.data(), answer.body.size()))) {
      work.finished(item->id, unexpected(ErrorCode::kNetwork, "the client aborted the transfer of " + url));
      continue;
    }
    work.finished(item->id, client::Response{answer.status, answer.headers});
  }
}

}  // namespace kernelhub::testing
