#include "kernelhub/base/error.hpp"

#include <cstring>

namespace kernelhub {

std::string_view to_string(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument: return "invalid_argument";
    case ErrorCode::kNotFound: return "not_found";
    case ErrorCode::kNoCompatibleVariant: return "no_compatible_variant";
    case ErrorCode::kCorruptFile: return "corrupt_file";
    case ErrorCode::kIntegrityMismatch: return "integrity_mismatch";
    case ErrorCode::kIncompatibleBinary: return "incompatible_binary";
    case ErrorCode::kLoadFailed: return "load_failed";
    case ErrorCode::kIo: return "io";
    case ErrorCode::kNetwork: return "network";
    case ErrorCode::kUnauthorized: return "unauthorized";
    case ErrorCode::kGated: return "gated";
    case ErrorCode::kOfflineMiss: return "offline_miss";
    case ErrorCode::kUntrustedPublisher: return "untrusted_publisher";
    case ErrorCode::kBadSignature: return "bad_signature";
    case ErrorCode::kMissingSignature: return "missing_signature";
    case ErrorCode::kOpSchemaMismatch: return "op_schema_mismatch";
    case ErrorCode::kClientTooOld: return "client_too_old";
    case ErrorCode::kDependencyCycle: return "dependency_cycle";
    case ErrorCode::kKernelRaised: return "kernel_raised";
    case ErrorCode::kInternal: return "internal";
  }
  return "internal";
}

std::string_view to_string(Missing missing) {
  switch (missing) {
    case Missing::kUnspecified: return "";
    case Missing::kRepo: return "repo";
    case Missing::kRevision: return "revision";
    case Missing::kVersion: return "version";
    case Missing::kFile: return "file";
    case Missing::kLock: return "lock";
  }
  return "";
}

std::string_view to_string(NetworkFailure failure) {
  switch (failure) {
    case NetworkFailure::kUnspecified: return "";
    case NetworkFailure::kUnreachable: return "unreachable";
    case NetworkFailure::kNoAnswer: return "no_answer";
    case NetworkFailure::kCut: return "cut";
  }
  return "";
}

Error Error::with_context(std::string_view context) const {
  const std::string prefix = std::string(context) + ": ";
  return Error{code, prefix + message, missing, network, detail, detail ? prefix + detail_context : std::string()};
}

Error os_error(std::string_view what, int errno_value) {
  const ErrorCode code = (errno_value == ENOENT || errno_value == ENOTDIR) ? ErrorCode::kNotFound : ErrorCode::kIo;
  return Error{code, std::string(what) + ": " + std::strerror(errno_value)};
}

}  // namespace kernelhub
