// The kernel dependency list of a project (lockfile.hpp): `[tool.kernels.dependencies]` of a
// pyproject.toml or `[dependencies]` of a kernels.toml, parsed as TOML by toml++. Only what the
// table may hold is accepted — `"org/name" = 1` or `"org/name" = "revision"` — and anything else
// is an error naming its line (toml++ keeps the source position of every key), not a guess.
#include <toml++/toml.h>

#include <algorithm>
#include <optional>

#include "kernelhub/base/internal/read_file.hpp"
#include "kernelhub/client/repo_id.hpp"
#include "kernelhub/fetch/internal/lockfile.hpp"

namespace kernelhub {

namespace {

constexpr std::string_view kHint = ". Write one `\"org/name\" = <major version>` per line";
constexpr std::int64_t kMaxVersion = 999'999;

// Line `number` (1-based) of `text`, without its line break.
std::string_view line_of(std::string_view text, std::size_t number) {
  for (std::size_t i = 1; i < number && !text.empty(); ++i) {
    const std::size_t end = text.find('\n');
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
  }
  text = text.substr(0, text.find('\n'));
  if (text.ends_with('\r')) text.remove_suffix(1);
  return text;
}

bool is_bare_key_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

// The key that starts `line`, as written: a quoted key with its quotes, or a bare key.
std::string_view leading_key(std::string_view line) {
  line.remove_prefix(std::min(line.find_first_not_of(" \t"), line.size()));
  if (!line.empty() && (line.front() == '"' || line.front() == '\'')) {
    for (std::size_t i = 1; i < line.size(); ++i) {
      if (line[i] == '\\' && line.front() == '"') {
        ++i;
      } else if (line[i] == line.front()) {
        return line.substr(0, i + 1);
      }
    }
    return line;
  }
  std::size_t end = 0;
  while (end < line.size() && is_bare_key_char(line[end])) ++end;
  return line.substr(0, end);
}

std::string_view trim(std::string_view s) {
  s.remove_prefix(std::min(s.find_first_not_of(" \t"), s.size()));
  s.remove_suffix(s.size() - std::min(s.find_last_not_of(" \t") + 1, s.size()));
  return s;
}

// A syntax error that a dependency list invites, said in its terms: an unquoted repo id (a bare
// key cannot hold `/`), a missing `=`, a repo listed twice. nullopt for any other: toml++'s own
// description says it better.
std::optional<std::string> dependency_syntax_problem(const toml::parse_error& error, std::string_view text) {
  const std::string_view line = line_of(text, error.source().begin.line);
  const std::string_view key = leading_key(line);
  const std::string_view after = trim(line.substr(line.find(key) + key.size()));
  const std::string_view description = error.description();
  const bool quoted = !key.empty() && (key.front() == '"' || key.front() == '\'');
  if (!key.empty() && !quoted && after.starts_with('/')) {
    return "expected a quoted repo id: write \"" + std::string(trim(line.substr(0, line.find('=')))) + "\"";
  }
  if (quoted && description.find("redefine") != std::string_view::npos) return std::string(key) + " is listed twice";
  if (!key.empty() && description.find("expected '='") != std::string_view::npos) {
    return "expected `=` after " + std::string(key);
  }
  return std::nullopt;
}

// Whether the key at `source` was written in quotes (toml++ keeps only its value).
bool written_quoted(std::string_view text, const toml::source_region& source) {
  const std::string_view line = line_of(text, source.begin.line);
  const std::size_t column = source.begin.column - 1;  // 1-based; dependency keys are ASCII
  return column < line.size() && (line[column] == '"' || line[column] == '\'');
}

}  // namespace

Result<std::vector<KernelDependency>> read_dependencies(const std::filesystem::path& file) {
  auto text = read_file(file);
  if (!text) return unexpected(text.error());
  const bool pyproject = file.filename() == "pyproject.toml";
  const std::string wanted = pyproject ? "tool.kernels.dependencies" : "dependencies";
  const std::string where = "`[" + wanted + "]` of `" + file.string() + "`";
  auto bad = [&](std::size_t line, const std::string& what) {
    return unexpected(ErrorCode::kInvalidArgument,
                      where + ", line " + std::to_string(line) + ": " + what + std::string(kHint));
  };

  toml::table document;
  try {
    document = toml::parse(*text, file.string());
  } catch (const toml::parse_error& error) {
    const std::string at =
        "`" + file.string() + "` is not valid TOML, line " + std::to_string(error.source().begin.line);
    if (auto problem = dependency_syntax_problem(error, *text)) {
      return unexpected(ErrorCode::kInvalidArgument, at + ": " + *problem + std::string(kHint));
    }
    return unexpected(ErrorCode::kInvalidArgument, at + ", column " + std::to_string(error.source().begin.column) +
                                                       ": " + std::string(error.description()));
  }
  const toml::node* node = document.at_path(wanted).node();
  if (node == nullptr)
    return unexpected(ErrorCode::kNotFound, "`" + file.string() + "` has no `[" + wanted + "]` table");
  const toml::table* table = node->as_table();
  if (table == nullptr) return bad(node->source().begin.line, "`" + wanted + "` must be a table");

  // In the order written (a toml::table is ordered by key), so the lock lists them that way.
  std::vector<std::pair<const toml::key*, const toml::node*>> entries;
  for (const auto& [key, value] : *table) entries.emplace_back(&key, &value);
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    const auto& x = a.first->source().begin;
    const auto& y = b.first->source().begin;
    return std::pair(x.line, x.column) < std::pair(y.line, y.column);
  });

  std::vector<KernelDependency> out;
  for (const auto& [key, value] : entries) {
    const std::size_t line = key->source().begin.line;
    const std::string name(key->str());
    if (!client::RepoId::parse(name)) {
      if (!written_quoted(*text, key->source())) return bad(line, "expected a quoted repo id, not `" + name + "`");
      return bad(line, "\"" + name + "\" is not a repo id (org/name)");
    }
    KernelDependency dependency{name, std::nullopt, std::nullopt};
    if (const auto* revision = value->as_string()) {
      if (revision->get().empty()) return bad(line, "the revision of \"" + name + "\" is empty");
      dependency.revision = revision->get();
    } else if (const auto* version = value->as_integer();
               version && version->get() >= 0 && version->get() <= kMaxVersion) {
      dependency.version = static_cast<int>(version->get());
    } else {
      return bad(line, "the version of \"" + name + "\" must be a major version number");
    }
    out.push_back(std::move(dependency));
  }
  return out;
}

Result<std::filesystem::path> find_dependency_file(const std::filesystem::path& project_dir) {
  std::error_code ec;
  const auto pyproject = project_dir / "pyproject.toml";
  const auto kernels_toml = project_dir / "kernels.toml";
  const auto lists = [](const std::filesystem::path& file) {
    auto listed = read_dependencies(file);
    return listed || listed.error().code != ErrorCode::kNotFound;
  };
  if (std::filesystem::is_regular_file(pyproject, ec) && lists(pyproject)) {
    // Two lists of the kernels to lock: which one is meant is the user's to say, not ours to guess.
    if (std::filesystem::is_regular_file(kernels_toml, ec) && lists(kernels_toml)) {
      return unexpected(ErrorCode::kInvalidArgument,
                        "`" + project_dir.string() +
                            "` lists kernels in both pyproject.toml [tool.kernels.dependencies] and kernels.toml "
                            "[dependencies]; keep one list (the kernels package reads pyproject.toml) and lock again");
    }
    return pyproject;
  }
  if (std::filesystem::is_regular_file(kernels_toml, ec)) return kernels_toml;
  return unexpected(ErrorCode::kNotFound, "`" + project_dir.string() +
                                              "` has neither a pyproject.toml with [tool.kernels.dependencies] nor a "
                                              "kernels.toml with [dependencies]; list the kernels to lock there");
}

}  // namespace kernelhub
