// Problem: a check of a fetch that failed or warns, as a value (what was checked and what was
// found), as resolver/reason.hpp makes each selection decision one.
//
// fetch writes kernelhub's words for each (Error::message, Warning::message) and attaches the
// value (Error::detail, Warning::detail); an edge that speaks other words writes its own from the
// value: the Python shim the kernels package's (python/src/core/kernels_words/kernels_words.hpp),
// the CLI its options (tools/common/cli_words.hpp). fetch itself decides no wording.
//
// Thread safety: values.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "kernelhub/base/error.hpp"
#include "kernelhub/fetch/internal/signature_check.hpp"
#include "kernelhub/fetch/internal/variant_checks.hpp"
#include "kernelhub/resolver/select.hpp"

namespace kernelhub {

// The variant a check of its files speaks of: its kernel's metadata name, its build name, its folder.
struct CheckedVariant {
  std::string kernel;
  std::string variant;
  std::filesystem::path dir;
};

// metadata.json `kernels-minver` is newer than kKernelsCompatibleVersion (kClientTooOld).
struct KernelsTooOld {
  CheckedVariant checked;
  std::string minver;
};

// The files differ from metadata.json `digest` (kIntegrityMismatch).
struct DigestMismatch {
  CheckedVariant checked;
  std::vector<DigestViolation> violations;
};

// A warning: metadata.json records no digest.
struct NoDigest {
  CheckedVariant checked;
};

// A warning: built from a dirty git tree; `sources` says which ("kernel source, kernel-builder").
struct DirtyBuild {
  CheckedVariant checked;
  std::string sources;
};

// The signature verdict refuses the load (signature_check.hpp refuse_unless_accepted).
// `why_required`: what requires a signature, when one is required.
struct SignatureRefused {
  SignatureVerdict verdict;
  std::string repo;
  std::string variant;
  std::string why_required;
};

// A warning: a load that goes ahead without an accepted signature (signature_warning).
struct SignatureNotAccepted {
  SignatureVerdict verdict;
  std::string kernel;
  std::string repo;
  std::string variant;
};

// A lock file that does not lock `repo_id` at all (kNotFound, Missing::kLock).
struct NotLocked {
  std::string repo_id;
  std::string source;
};

// A LOCAL_KERNELS entry that is not `repo=path` (kInvalidArgument).
struct MalformedLocalKernels {
  std::string entry;
};

// Kernels that depend on each other: `repo_id` closes the loop `chain` ("a -> b -> a").
struct DependencyLoop {
  std::string repo_id;
  std::string chain;
};

// No variant of `what` ("`acme/relu` (revision: v1)") runs here (kNoCompatibleVariant).
struct NoVariantHere {
  std::string what;
  std::vector<resolver::Decision> decisions;
};

// The version asked for is not among the repo's `versions` (v<N> branches) (kNotFound).
struct VersionNotFound {
  std::string repo;
  int version = 0;
  std::vector<std::string> versions;

  // "Version 3 of `acme/relu` not found, available versions: v1, v2".
  std::string message() const;
};

// Offline, and the cache cannot resolve the version or revision asked for (kOfflineMiss);
// `refs` are those the cache at `cache_root` holds.
struct NotCachedOffline {
  std::string repo;
  std::optional<int> version;
  std::string revision;
  std::filesystem::path cache_root;
  std::vector<std::string> refs;

  // What is not cached, that the Hub is offline ("Version 1 of 'acme/relu' is not available in
  // the local cache and Hugging Face Hub is in offline mode."), and what to do (of which
  // `commit_option` is the caller's spelling of a commit: `--revision <commit>` on the command line).
  std::string message(std::string_view commit_option) const;
  // The first sentence of message(), which the kernels package's words share.
  std::string not_cached() const;
};

// Neither a version nor a revision was given (kInvalidArgument); `versions`: the repo's, when
// listed.
struct NoVersionGiven {
  std::string repo;
  std::optional<std::vector<std::string>> versions;

  // The highest version listed ("1" when none is), for a caller to write as an example.
  std::string example_version() const;
  // That one must be given, which versions there are, then `how_to_give` in the caller's terms.
  std::string message(std::string_view how_to_give) const;
};

using Problem = std::variant<KernelsTooOld, DigestMismatch, NoDigest, DirtyBuild, SignatureRefused,
                             SignatureNotAccepted, NotLocked, MalformedLocalKernels, DependencyLoop, NoVariantHere,
                             VersionNotFound, NotCachedOffline, NoVersionGiven>;

// A Problem as an Error's or a Warning's detail.
struct ProblemDetail final : ErrorDetail {
  explicit ProblemDetail(Problem value) : problem(std::move(value)) {}
  Problem problem;
};

// An Error with kernelhub's `message` and `problem` as its detail.
Error problem_error(ErrorCode code, std::string message, Problem problem, Missing missing = Missing::kUnspecified);

// A Warning with kernelhub's `message` and `problem` as its detail.
Warning problem_warning(std::string message, Problem problem);

// The Problem an Error or a Warning carries; null when it carries none (or another layer's).
const Problem* problem_of(const Error& error);
const Problem* problem_of(const Warning& warning);

}  // namespace kernelhub
