// The call policy's waits (client/src/hub_call.hpp) on a ManualClock (base/clock.hpp): each retry
// asks the clock for the backoff or the Retry-After it owes, and the test checks those waits
// without waiting for them. The answers come from a scripted transport, with no socket.
#include "hub_call.hpp"

#include <catch2/catch.hpp>
#include <deque>

using namespace kernelhub;
using namespace kernelhub::client;
using namespace std::chrono_literals;

namespace {

// One scripted answer: an HTTP response (status, headers, body) or a transport error.
struct Answer {
  int status = 200;
  std::vector<Header> headers;
  std::string body;
  std::optional<Error> failure;
};

// Answers each request with the next scripted answer, on the calling thread.
class ScriptedTransport final : public Transport {
 public:
  explicit ScriptedTransport(std::deque<Answer> script) : script_(std::move(script)) {}
  void run(Workload& work, int /*max_parallel*/) override {
    while (!work.done()) {
      auto item = work.next();
      if (!item) {
        work.wait_idle();
        continue;
      }
      REQUIRE_FALSE(script_.empty());
      Answer answer = std::move(script_.front());
      script_.pop_front();
      if (answer.failure) {
        work.finished(item->id, unexpected(*answer.failure));
        continue;
      }
      item->sink->begin(answer.status, answer.headers);
      item->sink->write(answer.body.data(), answer.body.size());
      work.finished(item->id, Response{answer.status, answer.headers});
    }
  }
  std::size_t left() const { return script_.size(); }

 private:
  std::deque<Answer> script_;
};

struct Fixture {
  std::shared_ptr<ManualClock> clock = std::make_shared<ManualClock>();
  Settings settings;
  ClientState state{std::make_shared<ParsedTrees>(4)};
  Fixture() {
    settings.endpoint = "http://hub.test";
    settings.clock = clock;  // the product's backoff: 1, 2, 4, 8, 8 s; Retry-After capped at 60 s
  }
  Result<std::string> get(ScriptedTransport& transport) {
    HubCall call{settings, transport, state};
    return call.get(settings.endpoint + "/api/kernels/org/kern/revision/main", What{"kernel repo `org/kern`"});
  }
};

Error cut() {
  return Error{ErrorCode::kNetwork, "connection reset", Missing::kUnspecified, NetworkFailure::kCut};
}

}  // namespace

TEST_CASE("a call retried on 5xx, a cut and 429 waits the backoff and the Retry-After, on its clock") {
  Fixture f;
  ScriptedTransport transport({{503}, {.failure = cut()}, {429, {{"retry-after", "30"}}}, {502}, {200, {}, "{}"}});
  const auto body = f.get(transport);
  REQUIRE(body);
  CHECK(*body == "{}");
  CHECK(transport.left() == 0);
  // After the 1st and 2nd failures the backoff (1 s, 2 s), then the 429's Retry-After, then the
  // backoff after a 4th failure (8 s): asked of the clock, not waited for.
  CHECK(f.clock->sleeps() == std::vector<std::chrono::nanoseconds>{1s, 2s, 30s, 8s});
  CHECK(f.clock->elapsed() == 41s);
}

TEST_CASE("a Retry-After longer than retry_after_max waits retry_after_max") {
  Fixture f;
  ScriptedTransport transport({{429, {{"retry-after", "3600"}}}, {200, {}, "{}"}});
  REQUIRE(f.get(transport));
  CHECK(f.clock->sleeps() == std::vector<std::chrono::nanoseconds>{60s});
}

TEST_CASE("a call that keeps failing stops after max_retries, and says how long it tried on its clock") {
  Fixture f;
  std::deque<Answer> script;
  for (int i = 0; i <= f.settings.max_retries; ++i) script.push_back({.failure = cut()});
  ScriptedTransport transport(std::move(script));
  const auto body = f.get(transport);
  REQUIRE_FALSE(body);
  CHECK(body.error().code == ErrorCode::kNetwork);
  CHECK(transport.left() == 0);
  CHECK(f.clock->sleeps() == std::vector<std::chrono::nanoseconds>{1s, 2s, 4s, 8s, 8s});
  CHECK_THAT(body.error().message, Catch::Contains("after 6 attempts over 23 s"));
}

TEST_CASE("a host that cannot be reached is not retried: no wait") {
  Fixture f;
  ScriptedTransport transport({{.failure = Error{ErrorCode::kNetwork, "connection refused", Missing::kUnspecified,
                                                 NetworkFailure::kUnreachable}}});
  REQUIRE_FALSE(f.get(transport));
  CHECK(f.clock->sleeps().empty());
}
