// Lock files: which commit of each kernel a project loads, and what each variant's files hash to.
//
// Two formats are read, both as the `kernels` package writes them:
//   kernels >= 0.17:  [{"dependency": {"repo-id": "org/name", "version": 1 | "revision": "main"},
//                       "lock": {"commit": "<40 hex>"}}]
//   kernels <= 0.16:  [{"repo_id": "org/name", "sha": "<40 hex>",
//                       "variants": {"<variant>": {"hash": "sha256-<hex>", "hash_type": "git_lfs_concat"}}}]
// kernels 0.17 rejects unknown fields, so the per-variant hashes cannot ride in its format:
// `kernelhub lock` writes kernels.lock in the current format (kernels 0.17 loads it) and the hashes
// beside it in `kernelhub.lock`, in the <= 0.16 format. LockFile::read() merges the two.
//
// What parse() accepts is what kernels 0.19.1's `KernelLocks.from_json` accepts (a commit of
// either case, kept in lower case; 40 or 64 hex digits; a null field as an absent one; any string
// as a repo id, checked where an entry is used; one repo at several versions; no byte order mark,
// no field twice), except where tests/fixtures/lock_files/verdicts.json writes down why not: the
// <= 0.16 format, which kernels >= 0.17 refuses, is read; a version beyond an int is refused.
//
// The `git_lfs_concat` hash of a variant (kernels <= 0.16 `get_kernel_locks`, which hashed the
// build/torch* variants; every variant under build/ here, tvm-ffi builds too): the files under
// build/<variant>/ (no .pyc, no __pycache__), sorted by their variant-relative POSIX path bytes;
// SHA-256 over, for each file, the path bytes followed by the raw bytes of its digest (the LFS
// sha256 for LFS files, else the git blob sha1). kernels stopped checking it in 0.17; we check it
// on every locked load (get_kernel with GetKernelOptions::lockfile).
//
// Thread safety: value types and free functions.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "kernelhub/base/environment_source.hpp"
#include "kernelhub/base/internal/file_digests.hpp"
#include "kernelhub/base/result.hpp"
#include "kernelhub/client/internal/hub_client.hpp"
#include "kernelhub/client/internal/repo_tree.hpp"
#include "kernelhub/fetch/kernel_dependency.hpp"

namespace kernelhub {

inline constexpr std::string_view kLockFileName = "kernels.lock";
inline constexpr std::string_view kLockHashesFileName = "kernelhub.lock";

struct KernelLock {
  KernelDependency dependency;
  std::string commit;                           // 40 (or 64) lower-case hex
  std::map<std::string, std::string> variants;  // variant → "sha256-<64 hex>"; empty: no hashes known
};

// The order of kernels' lock map (its KernelDependency's): by repo, then versions (ascending)
// before revisions; an entry of the <= 0.16 format, which has neither, first.
using LockOrder = std::tuple<std::string, int, int, std::string>;
LockOrder lock_order(const KernelDependency& dependency);

enum class LockFormat {
  kKernels,  // kernels >= 0.17 (commit only)
  kLegacy,   // kernels <= 0.16 (commit and per-variant hashes)
};

struct LockFile {
  std::vector<KernelLock> locks;

  // The lock of `repo_id`; of a repo locked at several versions, the first in lock_order(), as
  // kernels' `get_locked_kernel` takes it.
  const KernelLock* find(std::string_view repo_id) const;
  // The lock of exactly `dependency`: its repo and its version or revision, as kernels matches a
  // kernel's own dependencies against a lock (its lock entries are keyed by both). An entry in
  // the format of kernels <= 0.16, which records no version, is its repo's.
  const KernelLock* find(const KernelDependency& dependency) const;
  // The lock of `repo_id`. Errors: kNotFound (Missing::kLock) naming `source`, the lock file, and
  // saying how to lock it, with its Problem (NotLocked, problem.hpp).
  Result<KernelLock> lock_of(std::string_view repo_id, std::string_view source) const;
  // The lock of exactly `dependency` (find() above). Errors: as lock_of(repo_id); a repo locked
  // at another version says so (its Problem is still NotLocked: the repo is not locked as asked).
  Result<KernelLock> lock_of(const KernelDependency& dependency, std::string_view source) const;

  // Errors: kCorruptFile naming `source` and what is wrong (not a list, a byte order mark, an
  // unknown field or one given twice, a commit that is not 40 or 64 hex, a hash that is not
  // sha256-<64 hex>, an unknown hash_type, a dependency locked twice).
  static Result<LockFile> parse(std::string_view json, std::string_view source);
  // Reads `path` and, when it carries no hashes, merges `kernelhub.lock` beside it. Errors:
  // kNotFound, kIo, those of parse(), and kCorruptFile when the two files lock different commits.
  static Result<LockFile> read(const std::filesystem::path& path);

  // Pretty JSON, two-space indent, locks in the order given.
  std::string to_json(LockFormat format) const;
};

// The `git_lfs_concat` hash of every variant under `build/` in `tree` (see above).
std::map<std::string, std::string> variant_lock_hashes(const client::RepoTree& tree);

// Checks the files of a variant directory against `tree` (the listing at the locked commit) and
// the lock: the same set of files (bytecode aside), each one's content matching its git or LFS
// digest, and the listing hashing to `expected`. Errors: kIntegrityMismatch naming every file
// that differs, or the two hashes. `digests`, when given, is shared with the load's other checks.
Status verify_variant_lock(const std::filesystem::path& variant_dir, const client::RepoTree& tree,
                           std::string_view variant, std::string_view expected, FileDigests* digests = nullptr);

// [tool.kernels.dependencies] of a pyproject.toml, or [dependencies] of a kernels.toml: one
// `"org/name" = <major version>` (or `= "<revision>"`) per line. Errors: kNotFound (no such file
// or table), kInvalidArgument naming the line of anything else in that table.
Result<std::vector<KernelDependency>> read_dependencies(const std::filesystem::path& file);

// The dependency file of a project directory: pyproject.toml when it has the table, else
// kernels.toml. Errors: kNotFound saying what was looked for; kInvalidArgument when both list
// kernels (naming both).
Result<std::filesystem::path> find_dependency_file(const std::filesystem::path& project_dir);

// Locks each dependency (what `kernelhub lock` does): the publisher trust check (publisher_trust.hpp),
// its version or revision resolved to a commit, and the hash of every variant under build/ (torch,
// tvm-ffi, any kind) in the listing at that commit; then, as `kernels lock` does, every kernel that any of its variants
// depends on (metadata.json `kernel-depends`, recursively). The locks are in kernels' order: by
// repo, versions before revisions. Network: refs, tree, org overview (once per repo),
// metadata.json of each variant.
// Errors: those of the client and of the trust check; kNotFound for a repo with no variant under
// build/; kDependencyCycle naming the chain; kInvalidArgument for a repo needed at two versions.
Result<LockFile> lock_dependencies(const std::vector<KernelDependency>& dependencies, const client::HubClient& hub,
                                   bool trust_remote_code, const EnvironmentSource& env);

}  // namespace kernelhub
