// kernelhub lock [PROJECT_DIR] [--format kernels|legacy] [--trust-remote-code] [--json]: lock a
// project's kernel dependencies to commits and variant hashes (kernelhub/fetch/internal/lockfile.hpp).
#include <cstdio>
#include <nlohmann/json.hpp>

#include "command.hpp"
#include "kernelhub/base/internal/atomic_file.hpp"
#include "kernelhub/client/internal/hub_client.hpp"
#include "kernelhub/fetch/internal/lockfile.hpp"

namespace kernelhub::cli {

namespace {

struct LockArguments {
  std::string project = ".";
  std::string format = "kernels";
  bool trust_remote_code = false;
  bool json = false;
};

int run_lock(const LockArguments& args) {
  const bool json = args.json;
  const std::filesystem::path project = args.project;
  auto fail = [&](const Error& error) { return cli::fail("kernelhub lock", error, json); };

  const EnvironmentSource env = process_environment();
  auto file = find_dependency_file(project);
  if (!file) return fail(file.error());
  auto dependencies = read_dependencies(*file);
  if (!dependencies) return fail(dependencies.error());
  auto settings = client::Settings::from_env(env);
  if (!settings) return fail(settings.error());
  const client::HubClient hub(std::move(*settings));
  auto lock = lock_dependencies(*dependencies, hub, args.trust_remote_code, env);
  if (!lock) return fail(lock.error());
  say_fallbacks("kernelhub lock", hub.fallbacks());

  const bool legacy = args.format == "legacy";
  const auto lock_path = project / kLockFileName;
  const auto hashes_path = project / kLockHashesFileName;
  std::vector<std::filesystem::path> written{lock_path};
  if (auto ok = write_file_atomic(lock_path, lock->to_json(legacy ? LockFormat::kLegacy : LockFormat::kKernels)); !ok) {
    return fail(ok.error());
  }
  if (!legacy) {
    if (auto ok = write_file_atomic(hashes_path, lock->to_json(LockFormat::kLegacy)); !ok) return fail(ok.error());
    written.push_back(hashes_path);
  } else {
    // A stale hash file would contradict the new lock; the legacy lock carries its own hashes.
    std::error_code ignored;
    std::filesystem::remove(hashes_path, ignored);
    // Said where it is written, not found at load: the format is for kernels <= 0.16 only.
    std::fprintf(stderr,
                 "kernelhub lock: note: %s is in the format of kernels <= 0.16, which kernels 0.17 and later refuse "
                 "(\"unknown field `repo_id`\"); without --format legacy it is in theirs, the hashes in %s\n",
                 lock_path.c_str(), std::string(kLockHashesFileName).c_str());
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
    std::printf("%s\n", nlohmann::json{{"dependencies", file->string()},
                                       {"written", files},
                                       {"locks", locks},
                                       {"requests", hub.requests()},
                                       {"fallbacks", hub.fallbacks()}}
                            .dump(2)
                            .c_str());
    return kExitOk;
  }
  std::printf("locked the kernels listed in %s\n", file->c_str());
  for (const auto& l : lock->locks) {
    std::printf("%s %s -> %s (%zu variants)\n", l.dependency.repo_id.c_str(), l.dependency.wanted().c_str(),
                l.commit.c_str(), l.variants.size());
  }
  for (const auto& path : written) std::printf("wrote %s\n", path.c_str());
  return kExitOk;
}

CommandRun define_lock(CLI::App& app) {
  auto args = std::make_shared<LockArguments>();
  app.description(
      "Lock the kernels a project depends on: each `\"org/name\" = <major version>` of\n"
      "[tool.kernels.dependencies] in PROJECT_DIR/pyproject.toml (or of [dependencies] in\n"
      "PROJECT_DIR/kernels.toml, for C++ projects; not both) is resolved to a commit, and every build variant\n"
      "at that commit, of every kind (torch, tvm-ffi, ...), is hashed (git_lfs_concat, as the kernels\n"
      "package hashed its torch builds up to 0.16).\n"
      "Load with `kernelhub get ORG/NAME --lockfile PROJECT_DIR/kernels.lock` or\n"
      "kernelhub::get_kernel(repo, {.lockfile = ...}): no API request when cached, and the hash is\n"
      "checked on every load.\n\n"
      "Writes PROJECT_DIR/kernels.lock in the format of kernels >= 0.17, which that package loads, and\n"
      "the variant hashes, which that format has no room for, beside it in kernelhub.lock.\n"
      "--format legacy writes kernels.lock in the format of kernels <= 0.16, hashes included, for\n"
      "projects on those releases: kernels 0.17 and later refuse it; kernelhub reads both.");
  app.add_option("PROJECT_DIR", args->project, "the project folder (default: the current one)");
  app.add_option("--format", args->format,
                 "kernels (default), or legacy: kernels.lock in the kernels <= 0.16 format, hashes included, "
                 "and no kernelhub.lock (kernels >= 0.17 refuses that format)")
      ->option_text("F")
      ->check(CLI::IsMember({"kernels", "legacy"}));
  app.add_flag("--trust-remote-code", args->trust_remote_code,
               "lock kernels whose publisher the Hub does not mark as trusted");
  app.add_flag("--json", args->json, "print one JSON object: the files written and each lock");
  return [args] { return run_lock(*args); };
}

}  // namespace

KERNELHUB_COMMAND("lock", "lock a project's kernel dependencies to commits and variant hashes", &define_lock);

}  // namespace kernelhub::cli
