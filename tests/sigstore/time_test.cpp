#include "kernelhub/sigstore/time.hpp"

#include <catch2/catch.hpp>

namespace kernelhub::sigstore {
namespace {

using std::chrono::microseconds;
using std::chrono::seconds;

TEST_CASE("RFC 3339 times parse to the microsecond and print back") {
  const auto end = parse_rfc3339("2022-12-31T23:59:59.999Z");
  REQUIRE(end);
  CHECK(to_rfc3339(*end) == "2022-12-31T23:59:59.999Z");
  CHECK(end->time_since_epoch() == microseconds{1672531199999000});
  const auto whole = parse_rfc3339("2025-06-12T12:02:20Z");
  REQUIRE(whole);
  CHECK(to_rfc3339(*whole) == "2025-06-12T12:02:20Z");
  // Nine fraction digits (protobuf's nanoseconds) keep six; an offset is folded into UTC.
  CHECK(to_rfc3339(*parse_rfc3339("2025-06-12T12:02:20.123456789Z")) == "2025-06-12T12:02:20.123456Z");
  CHECK(to_rfc3339(*parse_rfc3339("2025-06-12T14:02:20+02:00")) == "2025-06-12T12:02:20Z");
}

TEST_CASE("text that is not an RFC 3339 time is refused, naming it") {
  for (const char* bad : {"", "2025-06-12", "2025-06-12T12:02:20", "2025-13-12T12:02:20Z", "2025-02-30T00:00:00Z",
                          "2025-06-12T12:02:20.Z", "2025-06-12T12:02:20Zjunk", "2025-06-12 12:02:20Z",
                          "2025-06-12T12:02:20.1234567890Z"}) {
    const auto parsed = parse_rfc3339(bad);
    INFO(bad);
    REQUIRE_FALSE(parsed);
    CHECK(parsed.error().code == ErrorCode::kCorruptFile);
  }
}

TEST_CASE("a validity period is closed at both ends") {
  const Instant start{seconds{100}};
  const ValidityPeriod period{start, Instant{seconds{200}}};
  CHECK(period.contains(start));
  CHECK(period.contains(Instant{seconds{200}}));
  CHECK_FALSE(period.contains(Instant{seconds{200}} + microseconds{1}));
  CHECK_FALSE(period.contains(start - microseconds{1}));
  CHECK(ValidityPeriod{start, std::nullopt}.contains(Instant{seconds{1} * 4'000'000'000LL}));
}

}  // namespace
}  // namespace kernelhub::sigstore
