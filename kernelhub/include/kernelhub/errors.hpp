// The exceptions get_kernel and the CLI throw: one class per failure a user can act on, all
// derived from kernelhub::KernelhubError (itself a std::runtime_error). Inside the library,
// errors are values (kernelhub::Error); raise_for() is the one place that turns them into these.
#pragma once

#include <stdexcept>

#include "kernelhub/base/error.hpp"

namespace kernelhub {

class KernelhubError : public std::runtime_error {
 public:
  KernelhubError(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const { return code_; }

 private:
  ErrorCode code_;
};

// Malformed input: a repo id, a LOCAL_KERNELS value, an option.
struct InvalidArgumentError : KernelhubError {
  using KernelhubError::KernelhubError;
};
// A repo, revision, version, file or local path that does not exist; missing() says which
// (Missing::kUnspecified for a local path).
class NotFoundError : public KernelhubError {
 public:
  NotFoundError(ErrorCode code, const std::string& message, Missing missing = Missing::kUnspecified)
      : KernelhubError(code, message), missing_(missing) {}
  Missing missing() const { return missing_; }

 private:
  Missing missing_;
};
// Variants exist but none can run here; the message carries the decision trace.
struct NoCompatibleVariantError : KernelhubError {
  using KernelhubError::KernelhubError;
};
// A file that is not what it claims to be (not ELF, truncated, bad metadata.json).
struct CorruptFileError : KernelhubError {
  using KernelhubError::KernelhubError;
};
// Bytes that do not match their recorded digest.
struct IntegrityError : KernelhubError {
  using KernelhubError::KernelhubError;
};
// A well-formed binary that cannot load here: another cpu, glibc, torch or missing library.
struct IncompatibleBinaryError : KernelhubError {
  using KernelhubError::KernelhubError;
};
// dlopen or op registration failed.
struct LoadError : KernelhubError {
  using KernelhubError::KernelhubError;
};
// Offline (HF_HUB_OFFLINE) and the cache does not hold the kernel; the message lists what it holds.
struct OfflineMissError : KernelhubError {
  using KernelhubError::KernelhubError;
};
// The repo is gated, or the token is missing or wrong.
struct AccessError : KernelhubError {
  using KernelhubError::KernelhubError;
};
// The publisher is not a trusted kernel publisher and the caller did not opt in.
struct UntrustedPublisherError : KernelhubError {
  using KernelhubError::KernelhubError;
};
// A variant's signature (kernelhub.sig) does not verify with a trusted key, is malformed, or
// signs another repo, version or variant (docs/SIGNING.md).
struct SignatureError : KernelhubError {
  using KernelhubError::KernelhubError;
};
// A signature is required (a trusted key is configured, or require_signature) and there is none.
struct MissingSignatureError : SignatureError {
  using SignatureError::SignatureError;
};
// A typed op handle (Kernel::op<Signature>) or a boxed call whose C++ types do not fit the op's
// registered schema; the message names both and the signature to write. No call was made.
struct OpSchemaMismatchError : KernelhubError {
  using KernelhubError::KernelhubError;
};
// Network, I/O and anything else.
struct HubError : KernelhubError {
  using KernelhubError::KernelhubError;
};

[[noreturn]] void raise_for(const Error& error);

}  // namespace kernelhub
