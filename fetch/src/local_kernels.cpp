#include "kernelhub/fetch/internal/local_kernels.hpp"

#include "kernelhub/client/repo_id.hpp"
#include "kernelhub/fetch/internal/problem.hpp"

namespace kernelhub {

namespace {

Unexpected malformed(std::string_view entry) {
  return unexpected(problem_error(ErrorCode::kInvalidArgument,
                                  "LOCAL_KERNELS entry `" + std::string(entry) +
                                      "` is malformed; expected `org/name=/path/to/kernel` entries separated by `:`",
                                  MalformedLocalKernels{std::string(entry)}));
}

}  // namespace

Result<std::map<std::string, std::filesystem::path>> parse_local_kernels(std::string_view value) {
  std::map<std::string, std::filesystem::path> out;
  std::size_t start = 0;
  while (start <= value.size()) {
    const std::size_t end = value.find(':', start);
    const std::string_view entry =
        value.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    if (!entry.empty()) {
      const std::size_t eq = entry.find('=');
      if (eq == std::string_view::npos || eq == 0 || eq + 1 == entry.size()) return malformed(entry);
      auto repo = client::RepoId::parse(entry.substr(0, eq));
      if (!repo) return unexpected(repo.error().with_context(env_vars::kLocalKernels));
      out[repo->to_string()] = std::filesystem::path(entry.substr(eq + 1));
    }
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return out;
}

Result<std::optional<std::filesystem::path>> local_kernel_dir(std::string_view repo_id, const EnvironmentSource& env) {
  const auto value = env(env_vars::kLocalKernels);
  if (!value) return std::optional<std::filesystem::path>();
  KH_ASSIGN_OR_RETURN(const auto map, parse_local_kernels(*value));
  const auto it = map.find(std::string(repo_id));
  return it == map.end() ? std::optional<std::filesystem::path>() : std::optional(it->second);
}

}  // namespace kernelhub
