#include "kernelhub/client/repo_id.hpp"

#include "kernelhub/base/internal/hub_names.hpp"

namespace kernelhub::client {

namespace {

constexpr std::string_view kExpected = " (expected org/name, e.g. kernels-community/activation)";

}  // namespace

Result<RepoId> RepoId::parse(std::string_view text) {
  auto parts = hub_names::split_repo_id(text);
  if (!parts) return unexpected(ErrorCode::kInvalidArgument, parts.error().message + std::string(kExpected));
  if (parts->ns.empty()) {
    // A single-part id passed the rules: it prints as it is.
    return unexpected(ErrorCode::kInvalidArgument,
                      "`" + std::string(text) + "` is not a valid repo id: it has no `/`; a kernel lives under an org" +
                          std::string(kExpected));
  }
  return RepoId{std::string(parts->ns), std::string(parts->name)};
}

}  // namespace kernelhub::client
