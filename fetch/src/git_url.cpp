#include "git_url.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace kernelhub {

bool is_usize(std::string_view s) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty() || s.size() > 20) return false;
  if (!std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; })) return false;
  return s.size() < 20 || s <= std::string_view("18446744073709551615");
}

std::optional<std::string> git_url_problem(std::string_view s) {
  static constexpr std::array<std::string_view, 7> kSchemes{"https",   "http",      "git",     "ssh",
                                                            "git+ssh", "git+https", "git+http"};
  auto forbidden_in_host = [](char c) {
    return static_cast<unsigned char>(c) <= 0x20 || std::string_view("#/:<>?@[\\]^|").find(c) != std::string_view::npos;
  };
  auto valid_authority = [&](std::string_view authority, bool special) {
    if (const auto at = authority.rfind('@'); at != std::string_view::npos) authority.remove_prefix(at + 1);
    std::string_view host = authority;
    std::string_view port;
    if (host.starts_with('[')) {
      const auto close = host.find(']');
      if (close == std::string_view::npos) return false;
      port = host.substr(close + 1);
      host = host.substr(0, close + 1);
      if (!port.empty() && !port.starts_with(':')) return false;
    } else if (const auto colon = host.rfind(':'); colon != std::string_view::npos) {
      port = host.substr(colon);
      host = host.substr(0, colon);
      if (std::any_of(host.begin(), host.end(), forbidden_in_host)) return false;
    } else if (std::any_of(host.begin(), host.end(), forbidden_in_host)) {
      return false;
    }
    if (port.size() > 1 && !(is_usize(port.substr(1)) && port[1] != '+' && port.size() <= 6 &&
                             std::stoul(std::string(port.substr(1))) <= 65535)) {
      return false;
    }
    return !(special && host.empty());
  };

  const auto colon = s.find(':');
  const bool has_scheme = colon != std::string_view::npos && colon > 0 &&
                          std::isalpha(static_cast<unsigned char>(s[0])) &&
                          std::all_of(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(colon), [](char c) {
                            return std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.';
                          });
  if (has_scheme) {
    std::string scheme(s.substr(0, colon));
    std::transform(scheme.begin(), scheme.end(), scheme.begin(), [](unsigned char c) { return std::tolower(c); });
    std::string_view rest = s.substr(colon + 1);
    const bool special = scheme == "http" || scheme == "https";
    bool parses = true;
    if (rest.starts_with("//") || special) {
      while (!rest.empty() && rest.front() == '/') rest.remove_prefix(1);
      parses = valid_authority(rest.substr(0, rest.find_first_of("/?#")), special);
    }
    if (parses) {
      if (std::find(kSchemes.begin(), kSchemes.end(), scheme) == kSchemes.end()) {
        return "its scheme `" + scheme + "` is not one of https, http, git, ssh, git+ssh, git+https, git+http";
      }
      return std::nullopt;
    }
  }
  // scp-like: host before the first colon, a relative path after it.
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == s.size() || s[colon + 1] == '/' ||
      !valid_authority(s.substr(0, colon), false)) {
    return std::string("it is neither a URL with a git scheme nor user@host:path");
  }
  return std::nullopt;
}

}  // namespace kernelhub
