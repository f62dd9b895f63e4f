#include "kernelhub/fetch/internal/raise_for.hpp"

namespace kernelhub {

void raise_for(const Error& error) {
  switch (error.code) {
    case ErrorCode::kInvalidArgument: throw InvalidArgumentError(error.code, error.message);
    case ErrorCode::kNotFound: throw NotFoundError(error.code, error.message, error.missing);
    case ErrorCode::kNoCompatibleVariant: throw NoCompatibleVariantError(error.code, error.message);
    case ErrorCode::kCorruptFile: throw CorruptFileError(error.code, error.message);
    case ErrorCode::kIntegrityMismatch: throw IntegrityError(error.code, error.message);
    case ErrorCode::kIncompatibleBinary: throw IncompatibleBinaryError(error.code, error.message);
    case ErrorCode::kLoadFailed: throw LoadError(error.code, error.message);
    case ErrorCode::kOfflineMiss: throw OfflineMissError(error.code, error.message);
    case ErrorCode::kGated:
    case ErrorCode::kUnauthorized: throw AccessError(error.code, error.message);
    case ErrorCode::kUntrustedPublisher: throw UntrustedPublisherError(error.code, error.message);
    case ErrorCode::kBadSignature: throw SignatureError(error.code, error.message);
    case ErrorCode::kMissingSignature: throw MissingSignatureError(error.code, error.message);
    case ErrorCode::kOpSchemaMismatch: throw OpSchemaMismatchError(error.code, error.message);
    case ErrorCode::kClientTooOld: throw ClientTooOldError(error.code, error.message);
    case ErrorCode::kDependencyCycle: throw DependencyCycleError(error.code, error.message);
    default: throw HubError(error.code, error.message);
  }
}

}  // namespace kernelhub
