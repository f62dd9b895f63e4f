#include "kernel_target.hpp"

namespace kernelhub::cli {

Result<KernelTarget> kernel_target(const std::string& text, bool hub_options) {
  std::error_code ec;
  if (std::filesystem::is_directory(text, ec)) {
    if (hub_options) {
      return unexpected(ErrorCode::kInvalidArgument,
                        "--revision, --version and --all-versions are for a Hub repo, not a directory");
    }
    return KernelTarget{std::nullopt, std::filesystem::path(text)};
  }
  auto repo = client::RepoId::parse(text);
  if (!repo) {
    return unexpected(ErrorCode::kInvalidArgument,
                      "`" + text + "` is neither a kernel directory nor a repo id (" + repo.error().message + ")");
  }
  return KernelTarget{*std::move(repo), std::nullopt};
}

Result<std::optional<int>> latest_version(const client::HubClient& hub, const client::RepoId& repo) {
  KH_ASSIGN_OR_RETURN(const std::vector<std::string> versions, hub.list_versions(repo, RepoType::kKernel));
  if (versions.empty()) return std::optional<int>();
  return std::optional<int>(std::stoi(versions.back().substr(1)));  // "v12": list_versions checked the digits
}

}  // namespace kernelhub::cli
