#include "same_build.hpp"

#include <string>

#include "kernels_words.hpp"

namespace kernelhub::kernels_words {

Status check_same_build(const Metadata& loaded, const Metadata& candidate, const std::filesystem::path& candidate_dir) {
  if (!loaded.has_digest && !candidate.has_digest) return {};  // nothing to compare them by
  const std::string conflict = "Kernel '" + candidate.name + "' at `" + candidate_dir.string() + "` has the same id '" +
                               candidate.id + "' as a kernel that is already loaded, but it is a different build";
  const std::string hint = "Was the kernel modified without rebuilding it with `kernel-builder`?";
  if (!loaded.has_digest) {
    return unexpected(ErrorCode::kIntegrityMismatch,
                      conflict + ": this build has a digest, but the loaded build does not. " + hint);
  }
  if (!candidate.has_digest) {
    return unexpected(ErrorCode::kIntegrityMismatch,
                      conflict + ": the loaded build has a digest, but this build does not. " + hint);
  }
  const auto violations =
      compare_digests(loaded.digest_algorithm, loaded.digest, candidate.digest_algorithm, candidate.digest);
  if (violations.empty()) return {};
  std::string listed;
  for (const auto& v : violations) listed += std::string(listed.empty() ? "" : "\n") + describe(v);
  return unexpected(ErrorCode::kIntegrityMismatch,
                    conflict + ". " + hint + "\nDifferences with the loaded build:\n" + listed);
}

}  // namespace kernelhub::kernels_words
