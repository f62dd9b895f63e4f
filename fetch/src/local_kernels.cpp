#include "kernelhub/local_kernels.hpp"

#include "kernelhub/client/repo_id.hpp"

namespace kernelhub {

Result<std::map<std::string, std::filesystem::path>> parse_local_kernels(std::string_view value) {
  std::map<std::string, std::filesystem::path> out;
  std::size_t start = 0;
  while (start <= value.size()) {
    const std::size_t end = value.find(':', start);
    const std::string_view entry =
        value.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    if (!entry.empty()) {
      const std::size_t eq = entry.find('=');
      if (eq == std::string_view::npos || eq == 0 || eq + 1 == entry.size()) {
        return unexpected(ErrorCode::kInvalidArgument,
                          "LOCAL_KERNELS entry `" + std::string(entry) +
                              "` is malformed; expected `org/name=/path/to/kernel` entries separated by `:`");
      }
      auto repo = client::RepoId::parse(entry.substr(0, eq));
      if (!repo) return unexpected(repo.error().with_context("LOCAL_KERNELS"));
      out[repo->to_string()] = std::filesystem::path(entry.substr(eq + 1));
    }
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return out;
}

}  // namespace kernelhub
