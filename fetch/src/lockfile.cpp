#include "kernelhub/fetch/lockfile.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "kernelhub/base/json_nesting.hpp"
#include "kernelhub/base/sha256.hpp"
#include "kernelhub/client/repo_id.hpp"

namespace kernelhub {

namespace {

using nlohmann::ordered_json;

Error corrupt(std::string_view source, std::size_t index, const std::string& what) {
  return Error{ErrorCode::kCorruptFile, "lock file `" + std::string(source) + "`, entry " + std::to_string(index + 1) +
                                            ": " + what + ". Write it again with `kernelhub lock`"};
}

// Only the keys in `allowed`, as the kernels package's strict parsers demand.
Status only_keys(const ordered_json& object, std::initializer_list<std::string_view> allowed, std::string_view where,
                 std::string_view source, std::size_t index) {
  for (const auto& item : object.items()) {
    if (std::find(allowed.begin(), allowed.end(), item.key()) == allowed.end()) {
      return unexpected(corrupt(source, index, "unknown field `" + item.key() + "` in " + std::string(where)));
    }
  }
  return {};
}

Result<std::string> string_field(const ordered_json& object, const char* key, std::string_view where,
                                 std::string_view source, std::size_t index) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_string()) {
    return unexpected(corrupt(source, index, std::string(where) + " needs a string `" + key + "`"));
  }
  return it->get<std::string>();
}

Status check_repo_id(const std::string& repo_id, std::string_view source, std::size_t index) {
  if (!client::RepoId::parse(repo_id)) {
    return unexpected(corrupt(source, index, "`" + repo_id + "` is not a repo id (org/name)"));
  }
  return {};
}

Status check_commit(const std::string& commit, std::string_view source, std::size_t index) {
  if (!is_lower_hex(commit, 40)) {
    return unexpected(corrupt(source, index, "commit `" + commit + "` is not 40 lower-case hex digits"));
  }
  return {};
}

// kernels >= 0.17: {"dependency": {"repo-id", "version" | "revision"}, "lock": {"commit"}}.
Result<KernelLock> parse_current(const ordered_json& entry, std::string_view source, std::size_t index) {
  KH_RETURN_IF_ERROR(only_keys(entry, {"dependency", "lock"}, "the entry", source, index));
  const auto dependency = entry.find("dependency");
  const auto lock = entry.find("lock");
  if (dependency == entry.end() || !dependency->is_object() || lock == entry.end() || !lock->is_object()) {
    return unexpected(corrupt(source, index, "an entry needs the objects `dependency` and `lock`"));
  }
  KH_RETURN_IF_ERROR(only_keys(*dependency, {"repo-id", "version", "revision"}, "`dependency`", source, index));
  KH_RETURN_IF_ERROR(only_keys(*lock, {"commit"}, "`lock`", source, index));
  KernelLock out;
  KH_ASSIGN_OR_RETURN(out.dependency.repo_id, string_field(*dependency, "repo-id", "`dependency`", source, index));
  KH_RETURN_IF_ERROR(check_repo_id(out.dependency.repo_id, source, index));
  const auto version = dependency->find("version");
  const auto revision = dependency->find("revision");
  if ((version == dependency->end()) == (revision == dependency->end())) {
    return unexpected(corrupt(source, index, "`dependency` needs exactly one of `version` and `revision`"));
  }
  if (version != dependency->end()) {
    if (!version->is_number_unsigned()) {
      return unexpected(corrupt(source, index, "`version` must be a non-negative integer (a major version)"));
    }
    out.dependency.version = version->get<int>();
  } else {
    if (!revision->is_string()) return unexpected(corrupt(source, index, "`revision` must be a string"));
    out.dependency.revision = revision->get<std::string>();
  }
  KH_ASSIGN_OR_RETURN(out.commit, string_field(*lock, "commit", "`lock`", source, index));
  KH_RETURN_IF_ERROR(check_commit(out.commit, source, index));
  return out;
}

// kernels <= 0.16: {"repo_id", "sha", "variants": {variant: {"hash", "hash_type"}}}.
Result<KernelLock> parse_legacy(const ordered_json& entry, std::string_view source, std::size_t index) {
  KH_RETURN_IF_ERROR(only_keys(entry, {"repo_id", "sha", "variants"}, "the entry", source, index));
  KernelLock out;
  KH_ASSIGN_OR_RETURN(out.dependency.repo_id, string_field(entry, "repo_id", "the entry", source, index));
  KH_RETURN_IF_ERROR(check_repo_id(out.dependency.repo_id, source, index));
  KH_ASSIGN_OR_RETURN(out.commit, string_field(entry, "sha", "the entry", source, index));
  KH_RETURN_IF_ERROR(check_commit(out.commit, source, index));
  const auto variants = entry.find("variants");
  if (variants == entry.end() || !variants->is_object()) {
    return unexpected(corrupt(source, index, "the entry needs an object `variants`"));
  }
  for (const auto& [variant, lock] : variants->items()) {
    const std::string where = "variant `" + variant + "`";
    if (!lock.is_object()) return unexpected(corrupt(source, index, where + " must be an object"));
    KH_RETURN_IF_ERROR(only_keys(lock, {"hash", "hash_type"}, where, source, index));
    KH_ASSIGN_OR_RETURN(std::string hash, string_field(lock, "hash", where, source, index));
    if (hash.rfind("sha256-", 0) != 0 || !is_lower_hex(std::string_view(hash).substr(7), 64)) {
      return unexpected(corrupt(source, index, where + " hash `" + hash + "` is not sha256-<64 hex>"));
    }
    if (const auto type = lock.find("hash_type"); type != lock.end() && *type != "git_lfs_concat") {
      return unexpected(
          corrupt(source, index, where + " has hash_type " + type->dump() + "; only \"git_lfs_concat\" is known"));
    }
    out.variants.emplace(variant, std::move(hash));
  }
  return out;
}

Result<std::string> read_text(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return unexpected(ErrorCode::kNotFound,
                      "lock file `" + path.string() + "` does not exist; write it with `kernelhub lock <project dir>`");
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in && !in.eof()) return unexpected(ErrorCode::kIo, "cannot read lock file `" + path.string() + "`");
  return text.str();
}

}  // namespace

const KernelLock* LockFile::find(std::string_view repo_id) const {
  for (const auto& lock : locks) {
    if (lock.dependency.repo_id == repo_id) return &lock;
  }
  return nullptr;
}

const KernelLock* LockFile::find(const KernelDependency& dependency) const {
  for (const auto& lock : locks) {
    // A lock in the format of kernels <= 0.16 records no version: its entry is the repo's.
    const bool unversioned = !lock.dependency.version && !lock.dependency.revision;
    if (lock.dependency == dependency || (unversioned && lock.dependency.repo_id == dependency.repo_id)) return &lock;
  }
  return nullptr;
}

Result<KernelLock> LockFile::lock_of(const KernelDependency& dependency, std::string_view source,
                                     Wording wording) const {
  if (const KernelLock* lock = find(dependency)) return *lock;
  if (wording == Wording::kKernels || find(dependency.repo_id) == nullptr) {
    return lock_of(dependency.repo_id, source, wording);  // the words for a repo not locked at all
  }
  return unexpected(Error{ErrorCode::kNotFound,
                          "`" + dependency.describe() + "` is not locked in `" + std::string(source) +
                              "`, which locks `" + dependency.repo_id +
                              "` at another version or revision. Run "
                              "`kernelhub lock` again: it locks every kernel the locked ones depend on",
                          Missing::kLock});
}

Result<KernelLock> LockFile::lock_of(std::string_view repo_id, std::string_view source, Wording wording) const {
  if (const KernelLock* lock = find(repo_id)) return *lock;
  const std::string repo(repo_id);
  if (wording == Wording::kKernels) {
    // kernels/locking.py `_get_locked_kernel_revision`
    return unexpected(Error{ErrorCode::kNotFound,
                            "Kernel `" + repo +
                                "` is not locked. Please lock it with `kernels lock <project>` and then reinstall "
                                "the project.",
                            Missing::kLock});
  }
  return unexpected(Error{ErrorCode::kNotFound,
                          "`" + repo + "` is not locked in `" + std::string(source) +
                              "`. Add it to [tool.kernels.dependencies] in pyproject.toml (or [dependencies] in "
                              "kernels.toml) and run `kernelhub lock`",
                          Missing::kLock});
}

Result<LockFile> LockFile::parse(std::string_view json, std::string_view source) {
  // A lock file is four levels deep; anything much deeper is hostile (base/json_nesting.hpp).
  const bool shallow = json_nesting_within(json, 16);
  const auto document = shallow ? ordered_json::parse(json, nullptr, /*allow_exceptions=*/false) : ordered_json();
  if (!shallow || document.is_discarded() || !document.is_array()) {
    return unexpected(
        ErrorCode::kCorruptFile,
        "lock file `" + std::string(source) + "` is not a JSON list of locks. Write it again with `kernelhub lock`");
  }
  LockFile out;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < document.size(); ++i) {
    const auto& entry = document[i];
    if (!entry.is_object()) return unexpected(corrupt(source, i, "not an object"));
    auto lock = entry.contains("dependency") || entry.contains("lock") ? parse_current(entry, source, i)
                                                                       : parse_legacy(entry, source, i);
    if (!lock) return unexpected(lock.error());
    if (!seen.insert(lock->dependency.repo_id).second) {
      return unexpected(corrupt(source, i, "`" + lock->dependency.repo_id + "` is locked twice"));
    }
    out.locks.push_back(std::move(*lock));
  }
  return out;
}

Result<LockFile> LockFile::read(const std::filesystem::path& path) {
  KH_ASSIGN_OR_RETURN(std::string text, read_text(path));
  KH_ASSIGN_OR_RETURN(LockFile lock, parse(text, path.string()));
  const bool has_hashes =
      std::any_of(lock.locks.begin(), lock.locks.end(), [](const KernelLock& l) { return !l.variants.empty(); });
  const auto sidecar = path.parent_path() / kLockHashesFileName;
  std::error_code ec;
  if (has_hashes || path.filename() == kLockHashesFileName || !std::filesystem::exists(sidecar, ec)) return lock;
  KH_ASSIGN_OR_RETURN(std::string hashes_text, read_text(sidecar));
  KH_ASSIGN_OR_RETURN(LockFile hashes, parse(hashes_text, sidecar.string()));
  for (auto& entry : lock.locks) {
    const KernelLock* hashed = hashes.find(entry.dependency.repo_id);
    if (hashed == nullptr) continue;
    if (hashed->commit != entry.commit) {
      return unexpected(ErrorCode::kCorruptFile, "`" + path.string() + "` locks `" + entry.dependency.repo_id +
                                                     "` at " + entry.commit + " but `" + sidecar.string() +
                                                     "` has the hashes of " + hashed->commit +
                                                     ". The two were written apart; run `kernelhub lock` again");
    }
    entry.variants = hashed->variants;
  }
  return lock;
}

std::string LockFile::to_json(LockFormat format) const {
  ordered_json out = ordered_json::array();
  for (const auto& lock : locks) {
    ordered_json entry;
    if (format == LockFormat::kKernels) {
      ordered_json dependency;
      dependency["repo-id"] = lock.dependency.repo_id;
      if (lock.dependency.version) {
        dependency["version"] = *lock.dependency.version;
      } else {
        dependency["revision"] = lock.dependency.revision.value_or("main");
      }
      entry["dependency"] = std::move(dependency);
      entry["lock"] = ordered_json{{"commit", lock.commit}};
    } else {
      entry["repo_id"] = lock.dependency.repo_id;
      entry["sha"] = lock.commit;
      ordered_json variants = ordered_json::object();
      for (const auto& [variant, hash] : lock.variants) {
        variants[variant] = ordered_json{{"hash", hash}, {"hash_type", "git_lfs_concat"}};
      }
      entry["variants"] = std::move(variants);
    }
    out.push_back(std::move(entry));
  }
  return out.dump(2) + "\n";
}

}  // namespace kernelhub
