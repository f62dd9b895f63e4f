#include "kernelhub/sigstore/time.hpp"

#include "kernelhub/sigstore/internal/time_fields.hpp"

#include <cstdio>

namespace kernelhub::sigstore {

bool read_digits(std::string_view text, std::size_t at, std::size_t count, int& out) {
  if (at + count > text.size()) return false;
  out = 0;
  for (std::size_t i = at; i < at + count; ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    out = out * 10 + (text[i] - '0');
  }
  return true;
}

std::optional<long long> read_fraction_micros(std::string_view text, std::size_t& at, std::size_t max_digits) {
  long long micros = 0;
  std::size_t digits = 0;
  for (; at < text.size() && text[at] >= '0' && text[at] <= '9'; ++at, ++digits) {
    if (digits < 6) micros = micros * 10 + (text[at] - '0');
  }
  if (digits == 0 || digits > max_digits) return std::nullopt;
  for (; digits < 6; ++digits) micros *= 10;
  return micros;
}

std::optional<Instant> utc_instant(int year, int month, int day, int hour, int minute, int second, long long micros) {
  const std::chrono::year_month_day date{std::chrono::year{year}, std::chrono::month{static_cast<unsigned>(month)},
                                         std::chrono::day{static_cast<unsigned>(day)}};
  if (!date.ok() || hour > 23 || minute > 59 || second > 60) return std::nullopt;
  return Instant{std::chrono::sys_days{date} + std::chrono::hours{hour} + std::chrono::minutes{minute} +
                 std::chrono::seconds{second} + std::chrono::microseconds{micros}};
}

std::string to_rfc3339(Instant instant) {
  const auto day = std::chrono::floor<std::chrono::days>(instant);
  const std::chrono::year_month_day date{day};
  const std::chrono::hh_mm_ss time{instant - day};
  char text[48];
  std::snprintf(text, sizeof text, "%04d-%02u-%02uT%02d:%02d:%02d", static_cast<int>(date.year()),
                static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()),
                static_cast<int>(time.hours().count()), static_cast<int>(time.minutes().count()),
                static_cast<int>(time.seconds().count()));
  std::string out = text;
  if (auto fraction = time.subseconds().count(); fraction != 0) {
    std::snprintf(text, sizeof text, ".%06lld", static_cast<long long>(fraction));
    std::string digits = text;
    while (digits.back() == '0') digits.pop_back();
    out += digits;
  }
  return out + "Z";
}

Result<Instant> parse_rfc3339(std::string_view text) {
  const auto refuse = [&] {
    return unexpected(ErrorCode::kCorruptFile,
                      "`" + std::string(text.substr(0, 64)) + "` is not an RFC 3339 time (YYYY-MM-DDTHH:MM:SSZ)");
  };
  int year, month, day, hour, minute, second;
  if (text.size() < 20 || !read_digits(text, 0, 4, year) || text[4] != '-' || !read_digits(text, 5, 2, month) ||
      text[7] != '-' || !read_digits(text, 8, 2, day) || (text[10] != 'T' && text[10] != 't') ||
      !read_digits(text, 11, 2, hour) || text[13] != ':' || !read_digits(text, 14, 2, minute) || text[16] != ':' ||
      !read_digits(text, 17, 2, second)) {
    return refuse();
  }
  std::size_t at = 19;
  long long micros = 0;
  if (at < text.size() && text[at] == '.') {
    const auto fraction = read_fraction_micros(text, ++at, 9);
    if (!fraction) return refuse();
    micros = *fraction;
  }
  std::chrono::minutes offset{0};
  if (at < text.size() && (text[at] == 'Z' || text[at] == 'z')) {
    ++at;
  } else if (at < text.size() && (text[at] == '+' || text[at] == '-')) {
    int offset_hours, offset_minutes;
    if (!read_digits(text, at + 1, 2, offset_hours) || at + 3 >= text.size() || text[at + 3] != ':' ||
        !read_digits(text, at + 4, 2, offset_minutes) || offset_hours > 23 || offset_minutes > 59) {
      return refuse();
    }
    offset = std::chrono::hours{offset_hours} + std::chrono::minutes{offset_minutes};
    if (text[at] == '-') offset = -offset;
    at += 6;
  } else {
    return refuse();
  }
  const auto instant = utc_instant(year, month, day, hour, minute, second, micros);
  if (at != text.size() || !instant) return refuse();
  return *instant - offset;
}

std::string ValidityPeriod::to_string() const {
  return "from " + to_rfc3339(start) + (end ? " to " + to_rfc3339(*end) : std::string(", no end"));
}

}  // namespace kernelhub::sigstore
