#include "kernelhub/base/internal/hub_names.hpp"

#include "kernelhub/base/internal/printable.hpp"

namespace kernelhub::hub_names {

namespace {

constexpr std::size_t kShownBytes = 200;

// The name as a message shows it (printable.hpp), at most kShownBytes bytes of it.
std::string shown(std::string_view name) {
  std::string out = printable(name.substr(0, kShownBytes), Lines::kEscaped);
  if (name.size() > kShownBytes) out += "...";
  return out;
}

Unexpected refused(std::string_view what, std::string_view name, std::string_view rule) {
  return unexpected(ErrorCode::kInvalidArgument,
                    std::string(what) + " `" + shown(name) + "` is not allowed: " + std::string(rule));
}

// `\w` of huggingface_hub's ASCII regex.
bool is_word(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

std::string check_repo_id_part(std::string_view part, std::string_view what) {
  if (part.empty()) return "its " + std::string(what) + " is empty";
  for (char c : part) {
    if (!is_word(c) && c != '-' && c != '.') return "only ASCII letters, digits, `-`, `_` and `.` are allowed";
  }
  if (part.size() > kMaxRepoIdPartChars) {
    return "its " + std::string(what) + " is longer than " + std::to_string(kMaxRepoIdPartChars) + " characters";
  }
  if (!is_word(part.front()) || !is_word(part.back())) {
    return "its " + std::string(what) + " must start and end with a letter, a digit or `_`";
  }
  return {};
}

// The path rules, for a path (`what` = "path") or a revision.
Status check_path(std::string_view what, std::string_view path) {
  if (path.empty()) return refused(what, path, "it is empty");
  if (path.size() > kMaxRepoPathBytes) {
    return refused(what, path, "it is longer than " + std::to_string(kMaxRepoPathBytes) + " bytes");
  }
  for (char c : path) {
    if (c == '\0') return refused(what, path, "it contains a NUL byte");
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      return refused(what, path, "it contains a control character");
    if (c == '\\') return refused(what, path, "it contains a backslash; use `/` to separate folders");
  }
  if (path.front() == '/') return refused(what, path, "it is absolute; paths are relative to the repo root");
  std::string_view rest = path;
  while (true) {
    const std::size_t slash = rest.find('/');
    const std::string_view segment = rest.substr(0, slash);
    if (segment.empty()) return refused(what, path, "it has an empty segment (`//` or a trailing `/`)");
    if (segment == "." || segment == "..") return refused(what, path, "it has a `.` or `..` segment");
    if (segment == ".git") return refused(what, path, "`.git` folders cannot be committed");
    if (segment.size() > kMaxPathSegmentBytes) {
      return refused(what, path, "a segment is longer than " + std::to_string(kMaxPathSegmentBytes) + " bytes");
    }
    if (slash == std::string_view::npos) break;
    rest.remove_prefix(slash + 1);
  }
  return {};
}

}  // namespace

Result<RepoIdParts> split_repo_id(std::string_view id) {
  const auto bad = [&](std::string_view rule) {
    return unexpected(ErrorCode::kInvalidArgument, "`" + shown(id) + "` is not a valid repo id: " + std::string(rule));
  };
  const std::size_t slash = id.find('/');
  if (slash != std::string_view::npos && id.find('/', slash + 1) != std::string_view::npos) {
    return bad("it has more than one `/` (a repo id is `name` or `namespace/name`)");
  }
  RepoIdParts parts;
  parts.name = id;
  if (slash != std::string_view::npos) {
    parts.ns = id.substr(0, slash);
    parts.name = id.substr(slash + 1);
    if (std::string why = check_repo_id_part(parts.ns, "namespace"); !why.empty()) return bad(why);
  }
  if (std::string why = check_repo_id_part(parts.name, "name"); !why.empty()) return bad(why);
  if (id.find("--") != std::string_view::npos || id.find("..") != std::string_view::npos) {
    return bad("`--` and `..` are not allowed");
  }
  if (id.ends_with(".git")) return bad("it must not end with `.git`");
  return parts;
}

Status validate_repo_path(std::string_view path) {
  return check_path("path", path);
}

Result<std::string> normalize_folder_path(std::string_view path) {
  std::string out(path);
  while (out.starts_with("./")) out.erase(0, 2);
  while (!out.empty() && out.back() == '/') out.pop_back();
  KH_RETURN_IF_ERROR(validate_repo_path(out));
  return out;
}

Status validate_revision(std::string_view revision) {
  return check_path("revision", revision);
}

Status validate_ref_name(std::string_view name) {
  constexpr std::string_view kWhat = "revision name";
  if (name.empty()) return refused(kWhat, name, "it is empty");
  if (name.size() > kMaxRefNameBytes) {
    return refused(kWhat, name, "it is longer than " + std::to_string(kMaxRefNameBytes) + " bytes");
  }
  for (char c : name) {
    if (!is_word(c) && c != '-' && c != '.' && c != '/') {
      return refused(kWhat, name, "only letters, digits, `_`, `-`, `.` and `/` are allowed");
    }
  }
  if (name.front() == '-' || name.front() == '/' || name.back() == '/' || name.back() == '.') {
    return refused(kWhat, name, "it must not start with `-` or `/` nor end with `/` or `.`");
  }
  if (name.find("..") != std::string_view::npos || name.find("//") != std::string_view::npos) {
    return refused(kWhat, name, "it must not contain `..` or `//`");
  }
  // git's check-ref-format: no segment starts with `.` (so none is `.`, `..` or `.git`) or ends
  // with `.lock`.
  std::string_view rest = name;
  while (true) {
    const std::size_t slash = rest.find('/');
    const std::string_view segment = rest.substr(0, slash);
    if (segment.front() == '.') return refused(kWhat, name, "a segment must not start with `.`");
    if (segment.ends_with(".lock")) return refused(kWhat, name, "a segment must not end with `.lock`");
    if (slash == std::string_view::npos) break;
    rest.remove_prefix(slash + 1);
  }
  return {};
}

}  // namespace kernelhub::hub_names
