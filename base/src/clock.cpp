#include "kernelhub/base/internal/clock.hpp"

#include <charconv>
#include <thread>

namespace kernelhub {

namespace {

class RealClock : public Clock {
 public:
  explicit RealClock(std::chrono::seconds ahead = std::chrono::seconds(0)) : ahead_(ahead) {}
  std::chrono::steady_clock::time_point now() const override { return std::chrono::steady_clock::now() + ahead_; }
  std::chrono::system_clock::time_point wall_now() const override { return std::chrono::system_clock::now() + ahead_; }
  void sleep_for(std::chrono::nanoseconds duration) override { std::this_thread::sleep_for(duration); }

 private:
  std::chrono::seconds ahead_;
};

constexpr long kMaxAheadSeconds = 86'400;

}  // namespace

std::shared_ptr<Clock> real_clock() {
  static const std::shared_ptr<Clock> clock = std::make_shared<RealClock>();
  return clock;
}

Result<std::shared_ptr<Clock>> clock_from(const EnvironmentSource& env) {
  const auto value = env(env_vars::kKernelhubTestClockAheadS);
  if (!value) return real_clock();
  long seconds = -1;
  const char* end = value->data() + value->size();
  const auto [ptr, ec] = std::from_chars(value->data(), end, seconds);
  if (ec != std::errc() || ptr != end || seconds < 0 || seconds > kMaxAheadSeconds) {
    return unexpected(ErrorCode::kInvalidArgument, std::string(env_vars::kKernelhubTestClockAheadS) + "=`" + *value +
                                                       "` is not a whole number of seconds from 0 to " +
                                                       std::to_string(kMaxAheadSeconds) +
                                                       " (a test seam: unset it outside tests)");
  }
  if (seconds == 0) return real_clock();
  return std::shared_ptr<Clock>(std::make_shared<RealClock>(std::chrono::seconds(seconds)));
}

std::chrono::steady_clock::time_point ManualClock::now() const {
  std::lock_guard lock(mutex_);
  return start_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(elapsed_);
}

std::chrono::system_clock::time_point ManualClock::wall_now() const {
  std::lock_guard lock(mutex_);
  return wall_start_ + std::chrono::duration_cast<std::chrono::system_clock::duration>(elapsed_);
}

void ManualClock::sleep_for(std::chrono::nanoseconds duration) {
  std::lock_guard lock(mutex_);
  sleeps_.push_back(duration);
  elapsed_ += duration;
}

void ManualClock::advance(std::chrono::nanoseconds duration) {
  std::lock_guard lock(mutex_);
  elapsed_ += duration;
}

std::vector<std::chrono::nanoseconds> ManualClock::sleeps() const {
  std::lock_guard lock(mutex_);
  return sleeps_;
}

std::chrono::nanoseconds ManualClock::elapsed() const {
  std::lock_guard lock(mutex_);
  return elapsed_;
}

}  // namespace kernelhub
