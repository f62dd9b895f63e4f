#include "kernelhub/server/internal/git_patterns.hpp"

#include <cctype>

namespace kernelhub::server {
namespace {

// Enough for any real pattern against a 1 KiB path; a pathological one gives up (no match).
constexpr int kWildmatchSteps = 200000;

bool class_matches(std::string_view name, unsigned char c) {
  if (name == "alnum") return std::isalnum(c) != 0;
  if (name == "alpha") return std::isalpha(c) != 0;
  if (name == "digit") return std::isdigit(c) != 0;
  if (name == "lower") return std::islower(c) != 0;
  if (name == "upper") return std::isupper(c) != 0;
  if (name == "space") return std::isspace(c) != 0;
  if (name == "xdigit") return std::isxdigit(c) != 0;
  if (name == "punct") return std::ispunct(c) != 0;
  return false;
}

// A bracket expression starting at p[i] == '['. Sets `end` past its `]`; returns whether `c`
// is in it. An unterminated bracket is a literal `[` (end = i + 1, matched against c).
bool bracket(std::string_view p, std::size_t i, char c, std::size_t& end) {
  std::size_t j = i + 1;
  bool negate = false;
  if (j < p.size() && (p[j] == '!' || p[j] == '^')) {
    negate = true;
    ++j;
  }
  bool matched = false;
  bool first = true;
  for (; j < p.size(); first = false) {
    if (p[j] == ']' && !first) {
      end = j + 1;
      return c != '/' && matched != negate;
    }
    if (p[j] == '[' && j + 1 < p.size() && p[j + 1] == ':') {
      const std::size_t close = p.find(":]", j + 2);
      if (close != std::string_view::npos) {
        matched = matched || class_matches(p.substr(j + 2, close - j - 2), static_cast<unsigned char>(c));
        j = close + 2;
        continue;
      }
    }
    char low = p[j];
    if (low == '\\' && j + 1 < p.size()) low = p[++j];
    ++j;
    char high = low;
    if (j + 1 < p.size() && p[j] == '-' && p[j + 1] != ']') {
      high = p[j + 1];
      if (high == '\\' && j + 2 < p.size()) high = p[++j + 1];
      j += 2;
    }
    matched = matched || (c >= low && c <= high);
  }
  end = i + 1;
  return c == '[';
}

struct Matcher {
  std::string_view p;
  std::string_view t;
  int budget = kWildmatchSteps;

  bool match(std::size_t pi, std::size_t ti) {
    while (pi < p.size()) {
      if (--budget <= 0) return false;
      const char c = p[pi];
      if (c == '*') {
        std::size_t q = pi;
        while (q < p.size() && p[q] == '*') ++q;
        if (q - pi >= 2 && (pi == 0 || p[pi - 1] == '/') && (q == p.size() || p[q] == '/')) {
          if (q == p.size()) return true;  // trailing `/**`: everything below
          // `**/`: zero or more whole folders.
          if (match(q + 1, ti)) return true;
          for (std::size_t k = ti; k < t.size(); ++k) {
            if (t[k] == '/' && match(q + 1, k + 1)) return true;
            if (budget <= 0) return false;
          }
          return false;
        }
        // One star (or stars not forming a segment): any run without `/`.
        for (std::size_t k = ti;; ++k) {
          if (match(q, k)) return true;
          if (k >= t.size() || t[k] == '/' || budget <= 0) return false;
        }
      }
      if (ti >= t.size()) return false;
      if (c == '?') {
        if (t[ti] == '/') return false;
      } else if (c == '[') {
        std::size_t end = pi + 1;
        if (!bracket(p, pi, t[ti], end)) return false;
        pi = end;
        ++ti;
        continue;
      } else if (c == '\\' && pi + 1 < p.size()) {
        if (p[++pi] != t[ti]) return false;
      } else if (c != t[ti]) {
        return false;
      }
      ++pi;
      ++ti;
    }
    return ti == t.size();
  }
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

template <typename F>
void for_each_line(std::string_view text, F&& f) {
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (line.size() <= kMaxPatternBytes) f(line);
  }
}

std::string_view basename(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

bool wildmatch(std::string_view pattern, std::string_view text) {
  Matcher m{pattern, text};
  return m.match(0, 0);
}

GitAttributes GitAttributes::parse(std::string_view text, std::string folder) {
  GitAttributes out;
  out.folder_ = std::move(folder);
  for_each_line(text, [&](std::string_view line) {
    line = trim(line);
    if (line.empty() || line.front() == '#' || line.front() == '!') return;  // `!` is forbidden in attributes
    const std::size_t space = line.find_first_of(" \t");
    if (space == std::string_view::npos) return;
    std::string_view pattern = line.substr(0, space);
    Rule rule;
    if (pattern.ends_with('/')) return;  // folder patterns match no file in .gitattributes
    rule.basename_only = pattern.find('/') == std::string_view::npos;
    if (pattern.starts_with('/')) pattern.remove_prefix(1);
    rule.pattern = std::string(pattern);
    std::string_view attrs = line.substr(space);
    while (!(attrs = trim(attrs)).empty()) {
      const std::size_t end = attrs.find_first_of(" \t");
      const std::string_view attr = attrs.substr(0, end);
      attrs = end == std::string_view::npos ? std::string_view() : attrs.substr(end);
      if (attr == "filter=lfs") {
        rule.lfs = Lfs::kSet;
      } else if (attr == "-filter" || attr == "!filter" || attr.starts_with("filter=")) {
        rule.lfs = Lfs::kUnset;
      }
    }
    if (rule.lfs != Lfs::kUnspecified) out.rules_.push_back(std::move(rule));
  });
  return out;
}

GitAttributes::Lfs GitAttributes::lfs(std::string_view path) const {
  if (!folder_.empty()) {
    if (!path.starts_with(folder_) || path.size() <= folder_.size() || path[folder_.size()] != '/') {
      return Lfs::kUnspecified;
    }
    path.remove_prefix(folder_.size() + 1);
  }
  for (auto it = rules_.rbegin(); it != rules_.rend(); ++it) {
    if (wildmatch(it->pattern, it->basename_only ? basename(path) : path)) return it->lfs;
  }
  return Lfs::kUnspecified;
}

bool is_lfs_by_attributes(const std::vector<GitAttributes>& deepest_first, std::string_view path) {
  for (const GitAttributes& file : deepest_first) {
    const auto lfs = file.lfs(path);
    if (lfs != GitAttributes::Lfs::kUnspecified) return lfs == GitAttributes::Lfs::kSet;
  }
  return false;
}

GitIgnore GitIgnore::parse(std::string_view text) {
  GitIgnore out;
  for_each_line(text, [&](std::string_view line) {
    if (line.ends_with('\r')) line.remove_suffix(1);
    // Trailing spaces are dropped unless escaped.
    while (line.ends_with(' ') && !line.ends_with("\\ ")) line.remove_suffix(1);
    if (line.empty() || line.front() == '#') return;
    Rule rule;
    if (line.front() == '!') {
      rule.negated = true;
      line.remove_prefix(1);
    } else if (line.starts_with("\\!") || line.starts_with("\\#")) {
      line.remove_prefix(1);
    }
    if (line.ends_with('/')) {
      rule.directory_only = true;
      line.remove_suffix(1);
    }
    if (line.empty()) return;
    rule.basename_only = line.find('/') == std::string_view::npos;
    if (line.starts_with('/')) line.remove_prefix(1);
    rule.pattern = std::string(line);
    out.rules_.push_back(std::move(rule));
  });
  return out;
}

int GitIgnore::decide(std::string_view path, bool is_directory) const {
  for (auto it = rules_.rbegin(); it != rules_.rend(); ++it) {
    if (it->directory_only && !is_directory) continue;
    if (wildmatch(it->pattern, it->basename_only ? basename(path) : path)) return it->negated ? 0 : 1;
  }
  return -1;
}

bool GitIgnore::ignores(std::string_view path) const {
  if (rules_.empty()) return false;
  for (std::size_t slash = path.find('/'); slash != std::string_view::npos; slash = path.find('/', slash + 1)) {
    if (decide(path.substr(0, slash), true) == 1) return true;
  }
  return decide(path, false) == 1;
}

}  // namespace kernelhub::server
