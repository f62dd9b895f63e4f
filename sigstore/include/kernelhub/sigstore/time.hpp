// Instants and validity periods, as Sigstore's trusted roots, certificates, log entries and
// timestamps state them.
//
// An Instant has microsecond resolution (RFC 3339 fractions in a trusted root, RFC 3161 genTime
// fractions) and the range of any certificate (GeneralizedTime up to year 9999). A
// ValidityPeriod is a closed interval: its start and its end instant both belong to it, as
// protobuf-specs' TimeRange says and the conformance suite tests.
//
// Thread safety: value types and pure functions.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "kernelhub/base/result.hpp"

namespace kernelhub::sigstore {

using Instant = std::chrono::sys_time<std::chrono::microseconds>;

// `2025-06-12T12:02:20Z`, or with the fraction where there is one (`2022-12-31T23:59:59.999Z`).
std::string to_rfc3339(Instant instant);

// RFC 3339 as protobuf's JSON writes a Timestamp: `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`,
// at most nine fraction digits (kept to the microsecond). Errors: kCorruptFile naming the text.
Result<Instant> parse_rfc3339(std::string_view text);

struct ValidityPeriod {
  Instant start;
  std::optional<Instant> end;  // none: still valid

  // Whether start <= instant <= end (closed at both ends).
  bool contains(Instant instant) const { return start <= instant && (!end || instant <= *end); }
  // "from START" or "from START to END".
  std::string to_string() const;
};

}  // namespace kernelhub::sigstore
