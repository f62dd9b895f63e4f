#include "kernelhub/client/internal/transport.hpp"

namespace kernelhub::client {

const std::string* Response::header(std::string_view name) const {
  for (auto it = headers.rbegin(); it != headers.rend(); ++it) {
    if (it->name == name) return &it->value;
  }
  return nullptr;
}

namespace {

class SingleRequest final : public Workload {
 public:
  SingleRequest(const Request& request, BodySink& sink) : request_(request), sink_(sink) {}
  std::optional<Item> next() override {
    if (started_) return std::nullopt;
    started_ = true;
    return Item{1, request_, &sink_};
  }
  void finished(std::uint64_t, Result<Response> result) override { result_.emplace(std::move(result)); }
  bool done() const override { return started_; }
  Result<Response> take() {
    if (!result_) return unexpected(ErrorCode::kInternal, "transport returned without finishing the request");
    return std::move(*result_);
  }

 private:
  const Request& request_;
  BodySink& sink_;
  bool started_ = false;
  std::optional<Result<Response>> result_;
};

}  // namespace

Result<Response> Transport::perform(const Request& request, BodySink& sink) {
  SingleRequest work(request, sink);
  run(work, 1);
  return work.take();
}

}  // namespace kernelhub::client
