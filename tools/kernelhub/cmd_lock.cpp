// kernelhub lock [PROJECT_DIR] [--format kernels|legacy] [--trust-remote-code] [--json]: lock a
// project's kernel dependencies to commits and variant hashes (kernelhub/lockfile.hpp).
#include <cstdio>
#include <nlohmann/json.hpp>

#include "arguments.hpp"
#include "command.hpp"
#include "error_json.hpp"
#include "kernelhub/base/atomic_file.hpp"
#include "kernelhub/client/hub_client.hpp"
#include "kernelhub/lockfile.hpp"

namespace kernelhub::cli {

namespace {

constexpr const char* kHelp =
    "usage: kernelhub lock [PROJECT_DIR] [--format kernels|legacy] [--trust-remote-code] [--json]\n\n"
    "Lock the kernels a project depends on: each `\"org/name\" = <major version>` of\n"
    "[tool.kernels.dependencies] in PROJECT_DIR/pyproject.toml (or of [dependencies] in\n"
    "PROJECT_DIR/kernels.toml, for C++ projects) is resolved to a commit, and every build variant\n"
    "at that commit is hashed (git_lfs_concat, as the kernels package hashed them up to 0.16).\n"
    "Load with `kernelhub get ORG/NAME --lockfile PROJECT_DIR/kernels.lock` or\n"
    "kernelhub::get_kernel(repo, {.lockfile = ...}): no API request when cached, and the hash is\n"
    "checked on every load.\n\n"
    "Writes PROJECT_DIR/kernels.lock in the format of kernels >= 0.17, which that package loads, and\n"
    "the variant hashes, which that format has no room for, beside it in kernelhub.lock.\n\n"
    "options:\n"
    "  --format legacy      write kernels.lock in the kernels <= 0.16 format, hashes included,\n"
    "                       and no kernelhub.lock\n"
    "  --trust-remote-code  lock kernels whose publisher the Hub does not mark as trusted\n"
    "  --json               print one JSON object: the files written and each lock\n";

int run_lock(std::span<const std::string> args) {
  const Arguments parsed = parse_arguments(args, {.flags = {"--json", "--trust-remote-code"}, .options = {"--format"}});
  if (parsed.has("--help")) {
    std::fputs(kHelp, stdout);
    return kExitOk;
  }
  const std::string format_name = parsed.option("--format").value_or("kernels");
  if (!parsed.error.empty() || parsed.positionals.size() > 1 || (format_name != "kernels" && format_name != "legacy")) {
    std::fprintf(stderr, "kernelhub lock: %s\n%s",
                 !parsed.error.empty()           ? parsed.error.c_str()
                 : parsed.positionals.size() > 1 ? "expected at most one PROJECT_DIR"
                                                 : "--format is `kernels` or `legacy`",
                 kHelp);
    return kExitUsage;
  }
  const bool json = parsed.has("--json");
  const std::filesystem::path project = parsed.positionals.empty() ? "." : parsed.positionals[0];
  auto fail = [&](const Error& error) {
    if (json) {
      std::printf("%s\n", error_json(error).dump(2).c_str());
    } else {
      std::fprintf(stderr, "kernelhub lock: %s\n", error.message.c_str());
    }
    return kExitFailure;
  };

  const EnvironmentSource env = process_environment();
  auto file = find_dependency_file(project);
  if (!file) return fail(file.error());
  auto dependencies = read_dependencies(*file);
  if (!dependencies) return fail(dependencies.error());
  auto settings = client::Settings::from_env(env);
  if (!settings) return fail(settings.error());
  const client::HubClient hub(std::move(*settings));
  auto lock = lock_dependencies(*dependencies, hub, parsed.has("--trust-remote-code"), env);
  if (!lock) return fail(lock.error());

  const bool legacy = format_name == "legacy";
  const auto lock_path = project / kLockFileName;
  const auto hashes_path = project / kLockHashesFileName;
  std::vector<std::filesystem::path> written{lock_path};
  if (auto ok =
          write_file_atomic(lock_path, lock->to_json(legacy ? LockFormat::kLegacy : LockFormat::kKernels));
      !ok) {
    return fail(ok.error());
  }
  if (!legacy) {
    if (auto ok = write_file_atomic(hashes_path, lock->to_json(LockFormat::kLegacy)); !ok)
      return fail(ok.error());
    written.push_back(hashes_path);
  } else {
    // A stale hash file would contradict the new lock; the legacy lock carries its own hashes.
    std::error_code ignored;
    std::filesystem::remove(hashes_path, ignored);
  }

  if (json) {
    nlohmann::json locks = nlohmann::json::array();
    for (const auto& l : lock->locks) {
      locks.push_back({{"repo_id", l.dependency.repo_id},
                       {"wanted", l.dependency.wanted()},
                       {"commit", l.commit},
                       {"variants", l.variants}});
    }
    nlohmann::json files = nlohmann::json::array();
    for (const auto& path : written) files.push_back(path.string());
    std::printf("%s\n",
                nlohmann::json{{"dependencies", file->string()}, {"written", files}, {"locks", locks}}.dump(2).c_str());
    return kExitOk;
  }
  for (const auto& l : lock->locks) {
    std::printf("%s %s -> %s (%zu variants)\n", l.dependency.repo_id.c_str(), l.dependency.wanted().c_str(),
                l.commit.c_str(), l.variants.size());
  }
  for (const auto& path : written) std::printf("wrote %s\n", path.c_str());
  return kExitOk;
}

}  // namespace

KERNELHUB_COMMAND("lock", "lock a project's kernel dependencies to commits and variant hashes", &run_lock);

}  // namespace kernelhub::cli
