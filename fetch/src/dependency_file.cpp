// The kernel dependency list of a project (lockfile.hpp): the one TOML table `kernelhub lock`
// needs, read line by line. Only what the table may hold is accepted — `"org/name" = 1` or
// `"org/name" = "revision"` — and anything else in it is an error naming the line, rather than a
// guess. The rest of the file is skipped (multi-line strings included, so that a line inside one
// is never taken for a table header).
#include <fstream>
#include <sstream>

#include "kernelhub/client/repo_id.hpp"
#include "kernelhub/lockfile.hpp"

namespace kernelhub {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// Drops a trailing `# comment` that is outside quotes.
std::string_view strip_comment(std::string_view line) {
  char quote = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quote != 0) {
      if (c == '\\' && quote == '"') {
        ++i;
      } else if (c == quote) {
        quote = 0;
      }
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '#') {
      return line.substr(0, i);
    }
  }
  return line;
}

// `[a.b]` or `[ "a" . b ]` → "a.b"; nullopt when the line is not a table header.
std::optional<std::string> table_name(std::string_view line) {
  if (line.size() < 2 || line.front() != '[') return std::nullopt;
  const bool array = line.size() >= 4 && line.substr(0, 2) == "[[";
  std::string_view inner = line.substr(array ? 2 : 1);
  const std::size_t close = inner.find(']');
  if (close == std::string_view::npos) return std::nullopt;
  inner = inner.substr(0, close);
  std::string out;
  for (const char c : inner) {
    if (c != ' ' && c != '\t' && c != '"' && c != '\'') out.push_back(c);
  }
  return array ? "[" + out + "]" : out;  // arrays of tables never match a table we read
}

// A quoted string at the front of `s`; advances `s` past it.
std::optional<std::string> take_quoted(std::string_view& s) {
  if (s.empty() || (s.front() != '"' && s.front() != '\'')) return std::nullopt;
  const char quote = s.front();
  std::string out;
  for (std::size_t i = 1; i < s.size(); ++i) {
    const char c = s[i];
    if (c == quote) {
      s.remove_prefix(i + 1);
      return out;
    }
    if (c == '\\' && quote == '"') return std::nullopt;  // repo ids need no escapes
    out.push_back(c);
  }
  return std::nullopt;
}

}  // namespace

Result<std::vector<KernelDependency>> read_dependencies(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) return unexpected(ErrorCode::kNotFound, "cannot open `" + file.string() + "`");
  const bool pyproject = file.filename() == "pyproject.toml";
  const std::string wanted = pyproject ? "tool.kernels.dependencies" : "dependencies";
  const std::string where = "`[" + wanted + "]` of `" + file.string() + "`";

  std::vector<KernelDependency> out;
  bool found = false;
  bool inside = false;
  std::string open_multiline;  // the delimiter of a multi-line string being skipped
  std::string raw;
  for (int number = 1; std::getline(in, raw); ++number) {
    std::string_view line = raw;
    if (!open_multiline.empty()) {
      if (line.find(open_multiline) != std::string_view::npos) open_multiline.clear();
      continue;
    }
    line = trim(strip_comment(line));
    if (line.empty()) continue;
    if (auto name = table_name(line)) {
      inside = *name == wanted;
      found = found || inside;
      continue;
    }
    if (!inside) {
      for (const char* delimiter : {"\"\"\"", "'''"}) {
        const std::size_t first = line.find(delimiter);
        if (first != std::string_view::npos && line.find(delimiter, first + 3) == std::string_view::npos) {
          open_multiline = delimiter;
        }
      }
      continue;
    }
    auto bad = [&](const std::string& what) {
      return unexpected(ErrorCode::kInvalidArgument, where + ", line " + std::to_string(number) + ": " + what +
                                                         ". Write one `\"org/name\" = <major version>` per line");
    };
    std::string_view rest = line;
    auto key = take_quoted(rest);
    if (!key) return bad("expected a quoted repo id");
    rest = trim(rest);
    if (rest.empty() || rest.front() != '=') return bad("expected `=` after \"" + *key + "\"");
    rest = trim(rest.substr(1));
    if (!client::RepoId::parse(*key)) return bad("\"" + *key + "\" is not a repo id (org/name)");
    KernelDependency dependency{*key, std::nullopt, std::nullopt};
    if (auto revision = take_quoted(rest)) {
      if (!trim(rest).empty() || revision->empty()) return bad("unexpected text after the revision");
      dependency.revision = std::move(*revision);
    } else {
      int version = 0;
      if (rest.empty() || rest.size() > 6) return bad("the version of \"" + *key + "\" must be a major version number");
      for (const char c : rest) {
        if (c < '0' || c > '9') return bad("the version of \"" + *key + "\" must be a major version number");
        version = version * 10 + (c - '0');
      }
      dependency.version = version;
    }
    for (const auto& existing : out) {
      if (existing.repo_id == dependency.repo_id) return bad("\"" + *key + "\" is listed twice");
    }
    out.push_back(std::move(dependency));
  }
  if (!found) return unexpected(ErrorCode::kNotFound, "`" + file.string() + "` has no `[" + wanted + "]` table");
  return out;
}

Result<std::filesystem::path> find_dependency_file(const std::filesystem::path& project_dir) {
  std::error_code ec;
  const auto pyproject = project_dir / "pyproject.toml";
  if (std::filesystem::is_regular_file(pyproject, ec)) {
    auto listed = read_dependencies(pyproject);
    if (listed || listed.error().code != ErrorCode::kNotFound) return pyproject;
  }
  const auto kernels_toml = project_dir / "kernels.toml";
  if (std::filesystem::is_regular_file(kernels_toml, ec)) return kernels_toml;
  return unexpected(ErrorCode::kNotFound, "`" + project_dir.string() +
                                              "` has neither a pyproject.toml with [tool.kernels.dependencies] nor a "
                                              "kernels.toml with [dependencies]; list the kernels to lock there");
}

}  // namespace kernelhub
