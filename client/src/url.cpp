#include "url.hpp"

#include <cctype>
#include <vector>

namespace kernelhub::client::url {

namespace {

struct Parts {
  std::string scheme;     // lower-case, without "://"
  std::string authority;  // host[:port] as written
  std::string path;       // from the first '/' (may be empty), query included
};

Parts split(std::string_view url) {
  Parts p;
  const auto sep = url.find("://");
  if (sep == std::string_view::npos) {
    p.path = std::string(url);
    return p;
  }
  for (char c : url.substr(0, sep)) p.scheme.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  const std::string_view rest = url.substr(sep + 3);
  const auto slash = rest.find_first_of("/?#");
  p.authority = std::string(rest.substr(0, slash));
  if (slash != std::string_view::npos) p.path = std::string(rest.substr(slash));
  return p;
}

// Removes "." and ".." segments (RFC 3986 §5.2.4), keeping a query untouched.
std::string remove_dots(const std::string& path_and_query) {
  const auto q = path_and_query.find_first_of("?#");
  const std::string path = path_and_query.substr(0, q);
  const std::string query = q == std::string::npos ? "" : path_and_query.substr(q);
  std::string out;
  std::size_t i = 0;
  std::vector<std::string> segments;
  while (i <= path.size()) {
    auto next = path.find('/', i);
    if (next == std::string::npos) next = path.size();
    segments.push_back(path.substr(i, next - i));
    i = next + 1;
  }
  std::vector<std::string> kept;
  for (std::size_t k = 0; k < segments.size(); ++k) {
    const std::string& s = segments[k];
    const bool last = k + 1 == segments.size();
    if (s == ".") {
      if (last) kept.emplace_back();
    } else if (s == "..") {
      if (kept.size() > 1) kept.pop_back();
      if (last) kept.emplace_back();
    } else {
      kept.push_back(s);
    }
  }
  for (std::size_t k = 0; k < kept.size(); ++k) {
    if (k > 0) out.push_back('/');
    out += kept[k];
  }
  if (out.empty() || out.front() != '/') out.insert(out.begin(), '/');
  return out + query;
}

}  // namespace

std::string origin(std::string_view text) {
  Parts p = split(text);
  std::string host = p.authority;
  const auto at = host.rfind('@');
  if (at != std::string::npos) host = host.substr(at + 1);
  for (char& c : host) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const bool bracketed = !host.empty() && host.front() == '[';
  const auto colon = host.rfind(':');
  const bool has_port = colon != std::string::npos && (!bracketed || colon > host.find(']'));
  if (!has_port) host += p.scheme == "https" ? ":443" : ":80";
  return p.scheme + "://" + host;
}

std::string resolve(std::string_view base, std::string_view location) {
  if (location.find("://") != std::string_view::npos) {
    const auto colon = location.find("://");
    bool is_scheme = colon > 0;
    for (char c : location.substr(0, colon)) {
      if (!std::isalpha(static_cast<unsigned char>(c)) && c != '+' && c != '-' && c != '.') is_scheme = false;
    }
    if (is_scheme) return std::string(location);
  }
  const Parts b = split(base);
  if (location.starts_with("//")) return b.scheme + ":" + std::string(location);
  const std::string prefix = b.scheme + "://" + b.authority;
  if (location.starts_with("/")) return prefix + remove_dots(std::string(location));
  if (location.starts_with("?")) {
    return prefix + b.path.substr(0, b.path.find('?')) + std::string(location);
  }
  std::string dir = b.path.substr(0, b.path.find_first_of("?#"));
  dir = dir.substr(0, dir.rfind('/') + 1);
  if (dir.empty()) dir = "/";
  return prefix + remove_dots(dir + std::string(location));
}

std::string redact(std::string_view text) {
  const auto q = text.find('?');
  if (q == std::string_view::npos) return std::string(text);
  return std::string(text.substr(0, q)) + "?…";
}

}  // namespace kernelhub::client::url
