#include "kernelhub/server/repo_path.hpp"

namespace kernelhub::server {
namespace {
Unexpected bad_path(std::string_view what, std::string_view path, std::string_view rule) {
  std::string shown;
  for (char c : path.substr(0, 200)) {
    if (static_cast<unsigned char>(c) < 0x20) {
      shown += "\\x" + std::string(1, "0123456789abcdef"[(c >> 4) & 15]) + "0123456789abcdef"[c & 15];
    } else {
      shown.push_back(c);
    }
  }
  if (path.size() > 200) shown += "...";
  return unexpected(ErrorCode::kInvalidArgument,
                    std::string(what) + " `" + shown + "` is not allowed: " + std::string(rule));
}
}  // namespace

Status validate_repo_path(std::string_view path) {
  if (path.empty()) return bad_path("path", path, "it is empty");
  if (path.size() > kMaxRepoPathBytes) {
    return bad_path("path", path, "it is longer than " + std::to_string(kMaxRepoPathBytes) + " bytes");
  }
  for (char c : path) {
    if (c == '\0') return bad_path("path", path, "it contains a NUL byte");
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return bad_path("path", path, "it contains a control character");
    }
    if (c == '\\') return bad_path("path", path, "it contains a backslash; use `/` to separate folders");
  }
  if (path.front() == '/') return bad_path("path", path, "it is absolute; paths are relative to the repo root");
  std::string_view rest = path;
  while (true) {
    const std::size_t slash = rest.find('/');
    const std::string_view segment = rest.substr(0, slash);
    if (segment.empty()) return bad_path("path", path, "it has an empty segment (`//` or a trailing `/`)");
    if (segment == "." || segment == "..") return bad_path("path", path, "it has a `.` or `..` segment");
    if (segment == ".git") return bad_path("path", path, "`.git` folders cannot be committed");
    if (segment.size() > kMaxPathSegmentBytes) {
      return bad_path("path", path, "a segment is longer than " + std::to_string(kMaxPathSegmentBytes) + " bytes");
    }
    if (slash == std::string_view::npos) break;
    rest.remove_prefix(slash + 1);
  }
  return {};
}

Result<std::string> normalize_folder_path(std::string_view path) {
  std::string out(path);
  while (out.starts_with("./")) out.erase(0, 2);
  while (!out.empty() && out.back() == '/') out.pop_back();
  KH_RETURN_IF_ERROR(validate_repo_path(out));
  return out;
}

Status validate_ref_name(std::string_view name) {
  if (name.empty()) return bad_path("revision name", name, "it is empty");
  if (name.size() > kMaxRefNameBytes) {
    return bad_path("revision name", name, "it is longer than " + std::to_string(kMaxRefNameBytes) + " bytes");
  }
  for (char c : name) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
                    c == '-' || c == '.' || c == '/';
    if (!ok) return bad_path("revision name", name, "only letters, digits, `_`, `-`, `.` and `/` are allowed");
  }
  if (name.front() == '-' || name.front() == '/' || name.back() == '/' || name.back() == '.') {
    return bad_path("revision name", name, "it must not start with `-` or `/` nor end with `/` or `.`");
  }
  if (name.find("..") != std::string_view::npos || name.find("//") != std::string_view::npos) {
    return bad_path("revision name", name, "it must not contain `..` or `//`");
  }
  if (name.ends_with(".lock")) return bad_path("revision name", name, "it must not end with `.lock`");
  return {};
}

}  // namespace kernelhub::server
