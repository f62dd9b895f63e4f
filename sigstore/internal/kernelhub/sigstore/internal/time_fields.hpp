// The fields of a written time (RFC 3339 text, ASN.1 UTCTime and GeneralizedTime), read the same
// way for both.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include "kernelhub/sigstore/time.hpp"

namespace kernelhub::sigstore {

// The `count` decimal digits of `text` at `at` as a number; false if any is not a digit or the text
// ends first.
bool read_digits(std::string_view text, std::size_t at, std::size_t count, int& out);

// The digits of a fraction of a second starting at `at` (after its `.`), kept to the microsecond:
// advances `at` past all of them. nullopt when there are none or more than `max_digits`.
std::optional<long long> read_fraction_micros(std::string_view text, std::size_t& at, std::size_t max_digits);

// The instant of a UTC date and time; nullopt for a date or time that does not exist.
std::optional<Instant> utc_instant(int year, int month, int day, int hour, int minute, int second, long long micros);

}  // namespace kernelhub::sigstore
