#include "kernelhub/sigstore/internal/asn1_time.hpp"

#include <string_view>

#include "kernelhub/sigstore/internal/time_fields.hpp"

namespace kernelhub::sigstore {

std::optional<Instant> to_instant(const ASN1_TIME* time) {
  if (time == nullptr) return std::nullopt;
  const std::string_view text(reinterpret_cast<const char*>(ASN1_STRING_get0_data(time)),
                              static_cast<std::size_t>(ASN1_STRING_length(time)));
  int year, month, day, hour, minute, second;
  std::size_t at;
  if (ASN1_STRING_type(time) == V_ASN1_UTCTIME) {
    if (!read_digits(text, 0, 2, year)) return std::nullopt;
    year += year < 50 ? 2000 : 1900;
    at = 2;
  } else if (ASN1_STRING_type(time) == V_ASN1_GENERALIZEDTIME) {
    if (!read_digits(text, 0, 4, year)) return std::nullopt;
    at = 4;
  } else {
    return std::nullopt;
  }
  if (!read_digits(text, at, 2, month) || !read_digits(text, at + 2, 2, day) || !read_digits(text, at + 4, 2, hour) ||
      !read_digits(text, at + 6, 2, minute) || !read_digits(text, at + 8, 2, second)) {
    return std::nullopt;
  }
  at += 10;
  long long micros = 0;
  if (ASN1_STRING_type(time) == V_ASN1_GENERALIZEDTIME && at < text.size() && text[at] == '.') {
    const auto fraction = read_fraction_micros(text, ++at, 64);
    if (!fraction) return std::nullopt;
    micros = *fraction;
  }
  if (at + 1 != text.size() || text[at] != 'Z') return std::nullopt;
  return utc_instant(year, month, day, hour, minute, second, micros);
}

}  // namespace kernelhub::sigstore
