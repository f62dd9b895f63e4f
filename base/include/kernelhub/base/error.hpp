// Error: the one error value used inside every kernelhub layer.
//
// An Error is a closed ErrorCode (chosen so that a caller can decide "retry, fix the input, or
// give up" from the code alone) plus a message that says what was asked, what was found and what
// to do. Layers return Result<T>; only the edges (get_kernel, the CLI, the Python shim) turn an
// Error into an exception (see fetch/include/kernelhub/fetch/errors.hpp).
//
// Thread safety: a value type; copies are independent.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace kernelhub {

enum class ErrorCode {
  kInvalidArgument,      // the caller's input is malformed (repo id, variant name, env value)
  kNotFound,             // a path, repo, revision or file that does not exist
  kNoCompatibleVariant,  // variants exist, none runs here
  kCorruptFile,          // a file is not what it claims (not ELF, truncated, bad JSON)
  kIntegrityMismatch,    // bytes do not match their recorded digest
  kIncompatibleBinary,   // a well-formed binary that cannot load here (arch, glibc, torch ABI)
  kLoadFailed,           // dlopen or op registration failed
  kIo,                   // the operating system refused (permissions, disk full)
  kNetwork,              // transport failure after retries
  kUnauthorized,         // missing or wrong credentials
  kGated,                // the repo is gated: the user must accept its conditions on the Hub
  kOfflineMiss,          // offline (HF_HUB_OFFLINE) and the cache does not hold what was asked
  kUntrustedPublisher,   // the publisher is not trusted and the caller did not opt in
  kBadSignature,         // a signature is present but does not verify, or signs something else
  kMissingSignature,     // a signature is required (trusted key or option) and the variant has none
  kOpSchemaMismatch,     // a typed op handle whose C++ signature does not fit the op's schema
  kClientTooOld,         // the kernel needs a newer client (metadata.json `kernels-minver`)
  kDependencyCycle,      // kernels that depend on each other (metadata.json `kernel-depends`)
  kKernelRaised,         // a kernel function ran and raised an error of its own (its message kept)
  kInternal,             // a bug in kernelhub
};

// The stable lower-case name of a code, as printed by the CLI's --json output.
std::string_view to_string(ErrorCode code);

// What a kNotFound error did not find, where a caller answers each kind differently (the Python
// shim raises huggingface_hub's RepositoryNotFoundError / RevisionNotFoundError and the kernels
// package's ValueError for a version or a repo its lock file does not list). kUnspecified for
// local paths and for every other code.
enum class Missing { kUnspecified, kRepo, kRevision, kVersion, kFile, kLock };

// "", "repo", "revision", "version", "file" or "lock".
std::string_view to_string(Missing missing);

// How a kNetwork failure happened, where the caller acts on each differently: a host that cannot
// be reached or does not answer is not asked again (its cached answers are used, or the caller is
// told at once), while a cut or a busy server is retried. kUnspecified for every other code.
enum class NetworkFailure {
  kUnspecified,
  kUnreachable,  // no connection: refused, no route, no such host name, connect timeout
  kNoAnswer,     // connected, and no response head came within the read timeout
  kCut,          // an answer began and broke off (reset, closed early, stalled mid-body)
};

// "", "unreachable", "no_answer" or "cut".
std::string_view to_string(NetworkFailure failure);

// What failed, as a value, where a layer gives one: an edge that speaks other words than the
// message's (the Python shim raises the kernels package's) writes its own from it. Each layer
// derives its own kinds (fetch/internal/kernelhub/fetch/internal/problem.hpp); base knows none of them.
struct ErrorDetail {
  virtual ~ErrorDetail() = default;
};

struct Error {
  ErrorCode code;
  std::string message;
  Missing missing = Missing::kUnspecified;
  NetworkFailure network = NetworkFailure::kUnspecified;
  // The failure as a value (null where the message is all there is), and the contexts added
  // since it was attached ("outer: inner: "), which an edge writing its own words puts first.
  std::shared_ptr<const ErrorDetail> detail = nullptr;
  std::string detail_context = {};

  // Returns a copy whose message is "<context>: <message>", so callers can say what they were
  // doing without losing what went wrong underneath.
  Error with_context(std::string_view context) const;
};

// What a load that goes ahead warns of: kernelhub's words, and the same as a value for an edge
// with words of its own (as Error's detail).
struct Warning {
  std::string message;
  std::shared_ptr<const ErrorDetail> detail = nullptr;
};

// An Error for a failed system call: `what` names the operation and the file, errno is decoded.
Error os_error(std::string_view what, int errno_value);

}  // namespace kernelhub
