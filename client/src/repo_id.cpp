#include "kernelhub/client/repo_id.hpp"

#include <cctype>

namespace kernelhub::client {

namespace {

Unexpected bad_id(std::string_view text, std::string_view rule) {
  std::string shown(text.substr(0, 120));
  for (char& c : shown) {
    if (!std::isprint(static_cast<unsigned char>(c))) c = '?';
  }
  return unexpected(ErrorCode::kInvalidArgument,
                    "`" + shown + "` is not a valid repo id: " + std::string(rule) + " (expected org/name, e.g. kernels-community/activation)");
}

std::string_view check_part(std::string_view part) {
  if (part.empty()) return "the org and the name must not be empty";
  for (char c : part) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') {
      return "only letters, digits, `-`, `_` and `.` are allowed";
    }
  }
  if (part.find("--") != std::string_view::npos || part.find("..") != std::string_view::npos) {
    return "`--` and `..` are not allowed";
  }
  if (part.front() == '-' || part.front() == '.' || part.back() == '-' || part.back() == '.') {
    return "a part must not start or end with `-` or `.`";
  }
  return {};
}

}  // namespace

Result<RepoId> RepoId::parse(std::string_view text) {
  if (text.empty() || text.size() > 96) return bad_id(text, "it must be 1 to 96 characters long");
  const std::size_t slash = text.find('/');
  if (slash == std::string_view::npos || text.find('/', slash + 1) != std::string_view::npos) {
    return bad_id(text, "it must contain exactly one `/`");
  }
  const std::string_view org = text.substr(0, slash);
  const std::string_view name = text.substr(slash + 1);
  for (std::string_view part : {org, name}) {
    if (auto why = check_part(part); !why.empty()) return bad_id(text, why);
  }
  if (name.ends_with(".git")) return bad_id(text, "it must not end with `.git`");
  return RepoId{std::string(org), std::string(name)};
}

}  // namespace kernelhub::client
