#include "kernels_words.hpp"

#include <type_traits>
#include <vector>

namespace kernelhub::kernels_words {

namespace {

// "Kernel 'name' variant 'v'", as kernels names a kernel in its checks' messages.
std::string label(const std::string& kernel, const std::string& variant) {
  return "Kernel '" + kernel + "' variant '" + variant + "'";
}

std::string lines(const std::vector<DigestViolation>& violations) {
  std::string out;
  for (const auto& v : violations) out += std::string(out.empty() ? "" : "\n") + describe(v);
  return out;
}

// "1, 2": version branches as kernels lists them (by number, without the `v`).
std::string version_numbers(const std::vector<std::string>& versions) {
  std::string listed;
  for (const auto& v : versions) listed += (listed.empty() ? "" : ", ") + v.substr(1);
  return listed;
}

// signature_check.hpp refuse_unless_accepted, in validate.py SignatureValidator's words.
std::optional<std::string> refused(const SignatureRefused& p) {
  using Status = SignatureVerdict::Status;
  const std::string where = "`" + p.repo + "` variant `" + p.variant + "`";
  switch (p.verdict.status) {
    case Status::kMalformed:
      return where + ": the signature bundle is invalid, so its integrity cannot be verified:\n" + p.verdict.why_not;
    case Status::kDoesNotVerify:
      return where + ": the metadata could not be verified against its signature:\n" + p.verdict.why_not;
    case Status::kUnsigned: return where + ": not signed, so its integrity cannot be verified, and " + p.why_required;
    case Status::kAccepted:
    case Status::kNotAccepted:
    case Status::kMetadataMissing: return std::nullopt;
  }
  return std::nullopt;
}

// A policy that no alternative satisfies says "0 of N policies succeeded" (verify.py).
std::optional<std::string> not_accepted(const SignatureNotAccepted& p) {
  using Status = SignatureVerdict::Status;
  if (p.verdict.status == Status::kUnsigned) {
    return label(p.kernel, p.variant) + ": not signed, so its integrity cannot be verified";
  }
  return label(p.kernel, p.variant) + ": the metadata could not be verified against its signature:\n" +
         (p.verdict.policy_alternatives > 1
              ? "0 of " + std::to_string(p.verdict.policy_alternatives) + " policies succeeded"
              : p.verdict.why_not);
}

}  // namespace

std::string describe(const DigestViolation& v) {
  using Kind = DigestViolation::Kind;
  switch (v.kind) {
    case Kind::kMissingFile: return "Missing file: " + v.path;
    case Kind::kUnknownFile: return "Unknown file: " + v.path;
    case Kind::kHashMismatch:
      return "File hash mismatch for " + v.path + ": expected: " + v.expected + ", got: " + v.got;
    case Kind::kAlgorithmMismatch: return "Algorithm mismatch: expected: " + v.expected + ", got: " + v.got;
  }
  return {};
}

std::optional<std::string> of(const Problem& problem) {
  return std::visit(
      [](const auto& p) -> std::optional<std::string> {
        using P = std::decay_t<decltype(p)>;
        if constexpr (std::is_same_v<P, KernelsTooOld>) {
          return label(p.checked.kernel, p.checked.variant) + " requires kernels>=" + p.minver +
                 ", but kernelhub implements kernels " + std::string(kKernelsCompatibleVersion) +
                 ". Upgrade with: pip install --upgrade kernelhub";
        } else if constexpr (std::is_same_v<P, DigestMismatch>) {
          return label(p.checked.kernel, p.checked.variant) +
                 ": the files do not match the digest in the metadata, so they may have been modified:\n" +
                 lines(p.violations);
        } else if constexpr (std::is_same_v<P, NoDigest>) {
          return label(p.checked.kernel, p.checked.variant) +
                 ": the metadata does not record a digest, so its integrity cannot be verified";
        } else if constexpr (std::is_same_v<P, DirtyBuild>) {
          return label(p.checked.kernel, p.checked.variant) + " was built from a dirty git tree (" + p.sources +
                 " had uncommitted changes). Its recorded git revision does not fully identify the sources it was "
                 "built from, so the build may not be reproducible.";
        } else if constexpr (std::is_same_v<P, SignatureRefused>) {
          return refused(p);
        } else if constexpr (std::is_same_v<P, SignatureNotAccepted>) {
          return not_accepted(p);
        } else if constexpr (std::is_same_v<P, NotLocked>) {
          // locking.py `_get_locked_kernel_revision`
          return "Kernel `" + p.repo_id +
                 "` is not locked. Please lock it with `kernels lock <project>` and then reinstall the project.";
        } else if constexpr (std::is_same_v<P, MalformedLocalKernels>) {
          // load.py `_parse_local_kernel_overrides`
          return "Invalid LOCAL_KERNELS entry: " + p.entry + ". Expected format: repo_id_1=path_1:repo_id_2=path_2";
        } else if constexpr (std::is_same_v<P, DependencyLoop>) {
          // _internals/deps.py `resolve_kernel_tree`, with the chain added
          return "Cyclic kernel dependency detected: " + p.repo_id + " (" + p.chain + ")";
        } else if constexpr (std::is_same_v<P, NoVariantHere>) {
          return "Cannot find a build variant for this system in " + p.what + ":\n\n" +
                 resolver::format_trace(p.decisions);
        } else if constexpr (std::is_same_v<P, VersionNotFound>) {
          return "Version " + std::to_string(p.version) +
                 " not found, available versions: " + version_numbers(p.versions);
        } else if constexpr (std::is_same_v<P, NotCachedOffline>) {
          return p.not_cached() + " Download the kernel while online first, or pass an explicit `revision=<commit>`.";
        } else {
          static_assert(std::is_same_v<P, NoVersionGiven>);
          return std::nullopt;  // the shim asks for a version itself, in kernels' words, before a fetch
        }
      },
      problem);
}

std::string message(const Error& error) {
  const Problem* problem = problem_of(error);
  if (problem == nullptr) return error.message;
  auto words = of(*problem);
  return words ? error.detail_context + *words : error.message;
}

std::string message(const Warning& warning) {
  const Problem* problem = problem_of(warning);
  if (problem == nullptr) return warning.message;
  return of(*problem).value_or(warning.message);
}

}  // namespace kernelhub::kernels_words
