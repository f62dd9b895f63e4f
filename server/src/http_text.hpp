// Text helpers for the wire: percent-encoding, query strings, base64, dates.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kernelhub::server {

// Decodes %XX (and `+` as space when `plus_is_space`, for form bodies). nullopt on a malformed
// escape, so `%2` or `%zz` is a 400 rather than a guess.
std::optional<std::string> percent_decode(std::string_view text, bool plus_is_space = false);
// Encodes everything but RFC 3986 unreserved characters (and `/` when keep_slash).
std::string percent_encode(std::string_view text, bool keep_slash = false);

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

// Strict base64 (RFC 4648, padding optional); nullopt on any other character.
std::optional<std::string> base64_decode(std::string_view text);

// Current UTC time as 2026-11-20T10:00:00.000Z.
std::string iso8601_now();
// ASCII letters lowered (repo ids compare case-insensitively, as on the Hub).
std::string ascii_lower(std::string_view text);
// Text made safe to place in HTML (&, <, >, ", ').
std::string html_escape(std::string_view text);

}  // namespace kernelhub::server
