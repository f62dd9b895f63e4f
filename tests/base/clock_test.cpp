#include "kernelhub/base/internal/clock.hpp"

#include <catch2/catch.hpp>

using namespace kernelhub;
using namespace std::chrono_literals;

TEST_CASE("a ManualClock moves by what is slept on it and by advance, and records only the sleeps") {
  ManualClock clock;
  const auto start = clock.now();
  const auto wall_start = clock.wall_now();
  clock.sleep_for(1s);
  clock.advance(500ms);
  clock.sleep_for(2s);
  CHECK(clock.now() - start == 3500ms);
  CHECK(clock.wall_now() - wall_start == 3500ms);
  CHECK(clock.elapsed() == 3500ms);
  CHECK(clock.sleeps() == std::vector<std::chrono::nanoseconds>{1s, 2s});
}

TEST_CASE("the process's clock is the real one unless the test seam sets it ahead") {
  CHECK(clock_from(map_environment({})).value() == real_clock());
  CHECK(clock_from(map_environment({{"KERNELHUB_TEST_CLOCK_AHEAD_S", "0"}})).value() == real_clock());
  const auto ahead = clock_from(map_environment({{"KERNELHUB_TEST_CLOCK_AHEAD_S", "3"}}));
  REQUIRE(ahead);
  const auto wall_before = std::chrono::system_clock::now();
  const auto wall_ahead = (*ahead)->wall_now();
  const auto wall_after = std::chrono::system_clock::now();
  CHECK(wall_ahead - wall_before >= 3s);
  CHECK(wall_ahead - wall_after <= 3s);
  const auto before = std::chrono::steady_clock::now();
  const auto now_ahead = (*ahead)->now();
  const auto after = std::chrono::steady_clock::now();
  CHECK(now_ahead - before >= 3s);
  CHECK(now_ahead - after <= 3s);
  for (const char* bad : {"-1", "2.5", "soon", "86401"}) {
    const auto refused = clock_from(map_environment({{"KERNELHUB_TEST_CLOCK_AHEAD_S", bad}}));
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code == ErrorCode::kInvalidArgument);
    CHECK_THAT(refused.error().message, Catch::Contains("KERNELHUB_TEST_CLOCK_AHEAD_S") && Catch::Contains(bad));
  }
}
