// Text helpers for the wire: request targets, query strings, dates, HTML. (Percent-encoding and
// base64 are base's: kernelhub/base/internal/percent_encoding.hpp, base64.hpp.)
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kernelhub::server {

// Splits a raw request target into its path (still encoded) and query.
struct Target {
  std::string_view path;
  std::string_view query;
};
Target split_target(std::string_view target);

// Splits an encoded path on `/`, decoding each segment; nullopt on a bad escape. An empty
// leading segment (from the leading `/`) is dropped; empty segments elsewhere are kept.
std::optional<std::vector<std::string>> decode_segments(std::string_view path);

// key=value&key=value (form or query); repeated keys keep every value in order.
std::optional<std::multimap<std::string, std::string>> parse_form(std::string_view text);

// Current UTC time as 2026-11-20T10:00:00.000Z.
std::string iso8601_now();
// ASCII letters lowered (repo ids compare case-insensitively, as on the Hub).
std::string ascii_lower(std::string_view text);
// Text made safe to place in HTML (&, <, >, ", ').
std::string html_escape(std::string_view text);

}  // namespace kernelhub::server
