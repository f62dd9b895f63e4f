#include "kernelhub/resolver/version.hpp"

#include <charconv>

namespace kernelhub::resolver {

namespace {
// Reads a run of digits at the start of `text`; returns the number of characters read, 0 if none.
std::size_t read_int(std::string_view text, int& out) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (ec != std::errc() || out < 0) return 0;
  return static_cast<std::size_t>(ptr - text.data());
}
}  // namespace

Result<Version> Version::parse(std::string_view text) {
  Version v;
  const std::size_t n = read_int(text, v.major);
  if (n == 0 || n >= text.size() || text[n] != '.') {
    return unexpected(ErrorCode::kInvalidArgument,
                      "`" + std::string(text) + "` is not a version; expected MAJOR.MINOR, e.g. 2.15");
  }
  const std::size_t m = read_int(text.substr(n + 1), v.minor);
  if (m == 0) {
    return unexpected(ErrorCode::kInvalidArgument,
                      "`" + std::string(text) + "` is not a version; expected MAJOR.MINOR, e.g. 2.15");
  }
  return v;
}

std::string Version::to_string() const {
  return std::to_string(major) + "." + std::to_string(minor);
}

std::string release_text(std::string_view text) {
  std::string out;
  while (!text.empty() && text[0] >= '0' && text[0] <= '9') {
    std::size_t digits = 0;
    while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
    std::string_view number = text.substr(0, digits);
    while (number.size() > 1 && number[0] == '0') number.remove_prefix(1);
    out += (out.empty() ? "" : ".") + std::string(number);
    text.remove_prefix(digits);
    if (text.size() < 2 || text[0] != '.' || text[1] < '0' || text[1] > '9') break;
    text.remove_prefix(1);
  }
  return out;
}

}  // namespace kernelhub::resolver
