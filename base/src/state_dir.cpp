#include "kernelhub/base/internal/state_dir.hpp"

#include <sys/stat.h>

#include <system_error>

#include "kernelhub/base/environment_variables.hpp"

namespace kernelhub {

std::optional<std::filesystem::path> state_dir_from(const EnvironmentSource& env) {
  if (auto dir = env(env_vars::kKernelhubStateDir); dir && !dir->empty()) return std::filesystem::path(*dir);
  if (auto dir = env(env_vars::kXdgStateHome); dir && !dir->empty()) return std::filesystem::path(*dir) / "kernelhub";
  if (auto home = env(env_vars::kHome); home && !home->empty()) {
    return std::filesystem::path(*home) / ".local" / "state" / "kernelhub";
  }
  return std::nullopt;
}

std::optional<std::filesystem::path> state_subdir(const std::filesystem::path& state_dir, std::string_view name) {
  const auto dir = state_dir / name;
  std::error_code ec;
  if (std::filesystem::create_directories(dir, ec)) {
    // The user's own: other users may not add what a later process trusts.
    ::chmod(state_dir.c_str(), 0700);
    ::chmod(dir.c_str(), 0700);
  }
  if (ec || !std::filesystem::is_directory(dir, ec)) return std::nullopt;
  return dir;
}

}  // namespace kernelhub
