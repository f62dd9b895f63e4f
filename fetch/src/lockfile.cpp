#include "kernelhub/fetch/internal/lockfile.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <climits>
#include <fstream>
#include <set>
#include <sstream>

#include "kernelhub/base/internal/hex.hpp"
#include "kernelhub/base/internal/json_nesting.hpp"
#include "kernelhub/base/internal/sha256.hpp"
#include "kernelhub/fetch/internal/problem.hpp"

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

// A git object id as kernels' `Oid` reads it: 40 (SHA-1) or 64 (SHA-256) hex digits of either case,
// kept in lower case, as every commit is written here.
Result<std::string> commit_id(std::string commit, std::string_view source, std::size_t index) {
  std::transform(commit.begin(), commit.end(), commit.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (!is_lower_hex(commit, 40) && !is_lower_hex(commit, 64)) {
    return unexpected(corrupt(source, index, "commit `" + commit + "` is not a git object id (40 or 64 hex digits)"));
  }
  return commit;
}

// A field given as null is absent, as kernels' optional fields read it.
const ordered_json* field(const ordered_json& object, const char* key) {
  const auto it = object.find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
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
  // Any string, as kernels reads it: a repo id is checked where an entry is used (a download of
  // every locked kernel), so that an entry no load asks for breaks no other.
  KH_ASSIGN_OR_RETURN(out.dependency.repo_id, string_field(*dependency, "repo-id", "`dependency`", source, index));
  const ordered_json* version = field(*dependency, "version");
  const ordered_json* revision = field(*dependency, "revision");
  if ((version == nullptr) == (revision == nullptr)) {
    return unexpected(corrupt(source, index, "`dependency` needs exactly one of `version` and `revision`"));
  }
  if (version != nullptr) {
    if (!version->is_number_unsigned()) {
      return unexpected(corrupt(source, index, "`version` must be a non-negative integer (a major version)"));
    }
    // kernels reads any 64-bit size; no branch v<N> beyond an int is anyone's major version.
    if (version->get<std::uint64_t>() > static_cast<std::uint64_t>(INT_MAX)) {
      return unexpected(corrupt(source, index, "`version` " + version->dump() + " is larger than any major version"));
    }
    out.dependency.version = version->get<int>();
  } else {
    if (!revision->is_string()) return unexpected(corrupt(source, index, "`revision` must be a string"));
    out.dependency.revision = revision->get<std::string>();
  }
  KH_ASSIGN_OR_RETURN(std::string commit, string_field(*lock, "commit", "`lock`", source, index));
  KH_ASSIGN_OR_RETURN(out.commit, commit_id(std::move(commit), source, index));
  return out;
}

// kernels <= 0.16: {"repo_id", "sha", "variants": {variant: {"hash", "hash_type"}}}.
Result<KernelLock> parse_legacy(const ordered_json& entry, std::string_view source, std::size_t index) {
  KH_RETURN_IF_ERROR(only_keys(entry, {"repo_id", "sha", "variants"}, "the entry", source, index));
  KernelLock out;
  KH_ASSIGN_OR_RETURN(out.dependency.repo_id, string_field(entry, "repo_id", "the entry", source, index));
  KH_ASSIGN_OR_RETURN(std::string commit, string_field(entry, "sha", "the entry", source, index));
  KH_ASSIGN_OR_RETURN(out.commit, commit_id(std::move(commit), source, index));
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

LockOrder lock_order(const KernelDependency& dependency) {
  const bool unversioned = !dependency.version && !dependency.revision;
  return {dependency.repo_id,
          unversioned          ? 0
          : dependency.version ? 1
                               : 2,
          dependency.version.value_or(0), dependency.revision.value_or("")};
}

const KernelLock* LockFile::find(std::string_view repo_id) const {
  // The first of the repo's locks in kernels' order (its locks are a sorted map, and
  // `_get_locked_kernel_revision` takes the first key of the repo).
  const KernelLock* first = nullptr;
  for (const auto& lock : locks) {
    if (lock.dependency.repo_id != repo_id) continue;
    if (first == nullptr || lock_order(lock.dependency) < lock_order(first->dependency)) first = &lock;
  }
  return first;
}

const KernelLock* LockFile::find(const KernelDependency& dependency) const {
  for (const auto& lock : locks) {
    // A lock in the format of kernels <= 0.16 records no version: its entry is the repo's.
    const bool unversioned = !lock.dependency.version && !lock.dependency.revision;
    if (lock.dependency == dependency || (unversioned && lock.dependency.repo_id == dependency.repo_id)) return &lock;
  }
  return nullptr;
}

Result<KernelLock> LockFile::lock_of(const KernelDependency& dependency, std::string_view source) const {
  if (const KernelLock* lock = find(dependency)) return *lock;
  if (find(dependency.repo_id) == nullptr) return lock_of(dependency.repo_id, source);  // not locked at all
  return unexpected(problem_error(ErrorCode::kNotFound,
                                  "`" + dependency.describe() + "` is not locked in `" + std::string(source) +
                                      "`, which locks `" + dependency.repo_id +
                                      "` at another version or revision. Run "
                                      "`kernelhub lock` again: it locks every kernel the locked ones depend on",
                                  NotLocked{dependency.repo_id, std::string(source)}, Missing::kLock));
}

Result<KernelLock> LockFile::lock_of(std::string_view repo_id, std::string_view source) const {
  if (const KernelLock* lock = find(repo_id)) return *lock;
  const std::string repo(repo_id);
  return unexpected(problem_error(ErrorCode::kNotFound,
                                  "`" + repo + "` is not locked in `" + std::string(source) +
                                      "`. Add it to [tool.kernels.dependencies] in pyproject.toml (or [dependencies] "
                                      "in kernels.toml) and run `kernelhub lock`",
                                  NotLocked{repo, std::string(source)}, Missing::kLock));
}

Result<LockFile> LockFile::parse(std::string_view json, std::string_view source) {
  const std::string file = "lock file `" + std::string(source) + "`";
  // serde_json, kernels' reader, takes no byte order mark; Python's json module neither.
  if (json.starts_with("\xEF\xBB\xBF")) {
    return unexpected(ErrorCode::kCorruptFile, file +
                                                   " starts with a UTF-8 byte order mark, which the kernels package "
                                                   "refuses. Save it as UTF-8 without one");
  }
  // A field twice in one object: kernels refuses it (serde's `duplicate field`), where a JSON
  // parser would keep one of the two silently.
  std::vector<std::set<std::string>> keys;  // those of each object open, innermost last
  std::size_t entries = 0;                  // the entries begun (objects in no other object)
  std::string duplicate;
  std::size_t duplicate_entry = 0;
  const auto check_keys = [&](int /*depth*/, nlohmann::detail::parse_event_t event, ordered_json& parsed) {
    using Event = nlohmann::detail::parse_event_t;
    if (event == Event::object_start) {
      if (keys.empty()) ++entries;
      keys.emplace_back();
    } else if (event == Event::object_end) {
      keys.pop_back();
    } else if (event == Event::key && duplicate.empty() && !keys.back().insert(parsed.get<std::string>()).second) {
      duplicate = parsed.get<std::string>();
      duplicate_entry = entries - 1;
    }
    return true;
  };
  // A lock file is four levels deep; anything much deeper is hostile (base/json_nesting.hpp). A
  // NUL byte is in no JSON text, but nlohmann's reader would end the text there.
  const bool shallow = json_nesting_within(json, 16) && json.find('\0') == std::string_view::npos;
  const auto document = shallow ? ordered_json::parse(json, check_keys, /*allow_exceptions=*/false) : ordered_json();
  if (!shallow || document.is_discarded() || !document.is_array()) {
    return unexpected(ErrorCode::kCorruptFile,
                      file + " is not a JSON list of locks. Write it again with `kernelhub lock`");
  }
  if (!duplicate.empty()) {
    return unexpected(corrupt(source, duplicate_entry, "field `" + duplicate + "` is given twice"));
  }
  LockFile out;
  std::set<KernelDependency, bool (*)(const KernelDependency&, const KernelDependency&)> seen(
      [](const KernelDependency& a, const KernelDependency& b) { return lock_order(a) < lock_order(b); });
  for (std::size_t i = 0; i < document.size(); ++i) {
    const auto& entry = document[i];
    if (!entry.is_object()) return unexpected(corrupt(source, i, "not an object"));
    auto lock = entry.contains("dependency") || entry.contains("lock") ? parse_current(entry, source, i)
                                                                       : parse_legacy(entry, source, i);
    if (!lock) return unexpected(lock.error());
    // Keyed as kernels keys them: a repo may be locked at two versions, not twice at one.
    if (!seen.insert(lock->dependency).second) {
      const KernelDependency& d = lock->dependency;
      return unexpected(
          corrupt(source, i, "`" + (d.version || d.revision ? d.describe() : d.repo_id) + "` is locked twice"));
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
