#include "kernelhub/server/internal/repo_key.hpp"

#include "kernelhub/base/internal/hub_names.hpp"

namespace kernelhub::server {

std::string RepoKey::id() const {
  return ns.empty() ? name : ns + "/" + name;
}

Result<RepoKey> parse_repo_key(RepoType type, std::string_view id) {
  KH_ASSIGN_OR_RETURN(const hub_names::RepoIdParts parts, hub_names::split_repo_id(id));
  return RepoKey{type, std::string(parts.ns), std::string(parts.name)};
}

}  // namespace kernelhub::server
