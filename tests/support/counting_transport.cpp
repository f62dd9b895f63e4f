#include "counting_transport.hpp"

namespace kernelhub::testing {

namespace {

// Passes `inner`'s requests through, counting each one started.
class CountedWorkload final : public client::Workload {
 public:
  CountedWorkload(client::Workload& inner, std::atomic<int>& count) : inner_(inner), count_(count) {}
  std::optional<Item> next() override {
    auto item = inner_.next();
    if (item) ++count_;
    return item;
  }
  void finished(std::uint64_t id, Result<client::Response> result) override { inner_.finished(id, std::move(result)); }
  bool done() const override { return inner_.done(); }
  void wait_idle() override { inner_.wait_idle(); }

 private:
  client::Workload& inner_;
  std::atomic<int>& count_;
};

}  // namespace

void CountingTransport::run(client::Workload& work, int max_parallel) {
  CountedWorkload counted(work, count_);
  target_->run(counted, max_parallel);
}

}  // namespace kernelhub::testing
