#include "kernelhub/server/repo_key.hpp"

namespace kernelhub::server {

std::string RepoKey::id() const {
  return ns.empty() ? name : ns + "/" + name;
}

Status validate_repo_id_part(std::string_view part) {
  auto bad = [&](std::string_view rule) {
    return unexpected(ErrorCode::kInvalidArgument,
                      "repo id part `" + std::string(part.substr(0, 120)) + "` " + std::string(rule));
  };
  if (part.empty() || part.size() > 96) return bad("must be 1 to 96 characters long");
  for (char c : part) {
    const bool ok =
        (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
    if (!ok) return bad("may only contain letters, digits, `_`, `-` and `.`");
  }
  if (part.front() == '-' || part.front() == '.' || part.back() == '-' || part.back() == '.') {
    return bad("must not start or end with `-` or `.`");
  }
  if (part.find("--") != std::string_view::npos || part.find("..") != std::string_view::npos) {
    return bad("must not contain `--` or `..`");
  }
  if (part.ends_with(".git")) return bad("must not end with `.git`");
  return {};
}

Result<RepoKey> parse_repo_key(RepoType type, std::string_view id) {
  RepoKey key;
  key.type = type;
  const std::size_t slash = id.find('/');
  if (slash == std::string_view::npos) {
    key.name = std::string(id);
  } else {
    key.ns = std::string(id.substr(0, slash));
    key.name = std::string(id.substr(slash + 1));
    KH_RETURN_IF_ERROR(validate_repo_id_part(key.ns));
  }
  KH_RETURN_IF_ERROR(validate_repo_id_part(key.name));
  return key;
}

}  // namespace kernelhub::server
