// Clock: where the client and the fetch stage read the time and wait, so that a test moves time
// instead of waiting for it (as LevelDB's Env does). The product runs on real_clock(); tests pass
// a ManualClock, which records the waits it is asked for and returns at once.
//
// Thread safety: every method may be called from several threads. Ownership: shared; the holders
// of a Settings (client/settings.hpp) or VerificationStamps keep their clock alive.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "kernelhub/base/environment_source.hpp"
#include "kernelhub/base/result.hpp"

namespace kernelhub {

namespace env_vars {
// The test seam clock_from reads; never set outside tests (listed in base/environment_variables.cpp's
// table, kept out of the installed header).
inline constexpr std::string_view kKernelhubTestClockAheadS = "KERNELHUB_TEST_CLOCK_AHEAD_S";
}  // namespace env_vars

class Clock {
 public:
  virtual ~Clock() = default;
  // Monotonic time: durations, deadlines, backoff.
  virtual std::chrono::steady_clock::time_point now() const = 0;
  // Wall time, the time file stamps are in (st_ctim): for comparing with them.
  virtual std::chrono::system_clock::time_point wall_now() const = 0;
  // Blocks for `duration`.
  virtual void sleep_for(std::chrono::nanoseconds duration) = 0;
};

// steady_clock, system_clock and std::this_thread::sleep_for; one for the process, never null.
std::shared_ptr<Clock> real_clock();

// The process's clock as `env` sets it: real_clock(), or, with the test seam
// KERNELHUB_TEST_CLOCK_AHEAD_S, the real clock read that many seconds ahead (a test's later
// process sees files as older without waiting for them to age). Errors: kInvalidArgument when
// the value is not a whole number of seconds from 0 to 86400.
Result<std::shared_ptr<Clock>> clock_from(const EnvironmentSource& env);

// A clock that moves only when a test advances it or something sleeps on it: sleep_for records
// the duration, moves the time by it and returns at once.
class ManualClock final : public Clock {
 public:
  std::chrono::steady_clock::time_point now() const override;
  std::chrono::system_clock::time_point wall_now() const override;
  void sleep_for(std::chrono::nanoseconds duration) override;

  // Moves the time forward without recording a wait.
  void advance(std::chrono::nanoseconds duration);
  // Every sleep_for, in order.
  std::vector<std::chrono::nanoseconds> sleeps() const;
  // The time moved since the clock was made, waits and advances together.
  std::chrono::nanoseconds elapsed() const;

 private:
  mutable std::mutex mutex_;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  const std::chrono::system_clock::time_point wall_start_ = std::chrono::system_clock::now();
  std::chrono::nanoseconds elapsed_{0};
  std::vector<std::chrono::nanoseconds> sleeps_;
};

}  // namespace kernelhub
