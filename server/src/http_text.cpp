#include "http_text.hpp"

#include <chrono>
#include <ctime>

#include "kernelhub/base/internal/percent_encoding.hpp"

namespace kernelhub::server {

Target split_target(std::string_view target) {
  const std::size_t q = target.find('?');
  if (q == std::string_view::npos) return {target, {}};
  return {target.substr(0, q), target.substr(q + 1)};
}

std::optional<std::vector<std::string>> decode_segments(std::string_view path) {
  std::vector<std::string> out;
  if (path.starts_with('/')) path.remove_prefix(1);
  if (path.empty()) return out;
  while (true) {
    const std::size_t slash = path.find('/');
    auto segment = percent_decode(path.substr(0, slash));
    if (!segment) return std::nullopt;
    out.push_back(std::move(*segment));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return out;
}

std::optional<std::multimap<std::string, std::string>> parse_form(std::string_view text) {
  std::multimap<std::string, std::string> out;
  while (!text.empty()) {
    const std::size_t amp = text.find('&');
    std::string_view pair = text.substr(0, amp);
    if (!pair.empty()) {
      const std::size_t eq = pair.find('=');
      auto key = percent_decode(pair.substr(0, eq), true);
      auto value =
          eq == std::string_view::npos ? std::optional<std::string>("") : percent_decode(pair.substr(eq + 1), true);
      if (!key || !value) return std::nullopt;
      out.emplace(std::move(*key), std::move(*value));
    }
    if (amp == std::string_view::npos) break;
    text.remove_prefix(amp + 1);
  }
  return out;
}

std::string iso8601_now() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[96];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
  return buf;
}

std::string ascii_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

}  // namespace kernelhub::server
