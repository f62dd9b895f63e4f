// The exceptions of kernelhub's C++ APIs (get_kernel, tvm_ffi::get_kernel): one class per failure
// a user can act on, each carrying the ErrorCode that says the same, and a message that says what
// was asked, what was found and what to do. The library throws them (raise_for.hpp, not installed,
// turns its Error values into them); a program catches them.
#pragma once

#include <stdexcept>
#include <string>

#include "kernelhub/base/error.hpp"

namespace kernelhub {

class KernelhubError : public std::runtime_error {
 public:
  KernelhubError(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const { return code_; }

 private:
  ErrorCode code_;
};
// A repo, revision, version, file, op or local path that does not exist; missing() says which.
class NotFoundError : public KernelhubError {
 public:
  NotFoundError(ErrorCode code, const std::string& message, Missing missing = Missing::kUnspecified)
      : KernelhubError(code, message), missing_(missing) {}
  Missing missing() const { return missing_; }

 private:
  Missing missing_;
};
// One class per failure a user can act on (the ErrorCode they carry says the same).
#define KERNELHUB_ERROR(Name, Base) \
  struct Name : Base {              \
    using Base::Base;               \
  }
KERNELHUB_ERROR(InvalidArgumentError, KernelhubError);      // malformed input: a repo id, an option
KERNELHUB_ERROR(NoCompatibleVariantError, KernelhubError);  // none runs here: the closest miss, then the trace
KERNELHUB_ERROR(CorruptFileError, KernelhubError);          // a file is not what it claims
KERNELHUB_ERROR(IntegrityError, KernelhubError);            // bytes differ from their digest
KERNELHUB_ERROR(IncompatibleBinaryError, KernelhubError);   // cannot load here: cpu, glibc, torch
KERNELHUB_ERROR(LoadError, KernelhubError);                 // dlopen or op registration failed
KERNELHUB_ERROR(OfflineMissError, KernelhubError);          // offline and not cached: lists what is
KERNELHUB_ERROR(AccessError, KernelhubError);               // gated, or a missing or wrong token
KERNELHUB_ERROR(UntrustedPublisherError, KernelhubError);   // pass trust_remote_code if you trust it
KERNELHUB_ERROR(SignatureError, KernelhubError);            // docs/SIGNING.md
KERNELHUB_ERROR(MissingSignatureError, SignatureError);     // required, and there is none
KERNELHUB_ERROR(OpSchemaMismatchError, KernelhubError);     // a typed op that does not fit; no call made
KERNELHUB_ERROR(ClientTooOldError, KernelhubError);         // the kernel needs a newer kernelhub: upgrade
KERNELHUB_ERROR(DependencyCycleError, KernelhubError);      // kernel-depends loop back: the chain
KERNELHUB_ERROR(HubError, KernelhubError);                  // network, I/O, the rest
#undef KERNELHUB_ERROR

// An error a kernel function raised while it ran (a TVM-FFI kernel's own check, a failed launch):
// kind() is its class as the kernel named it ("ValueError", "RuntimeError"), kernel_message() its
// own words, backtrace() TVM-FFI's (may be empty); what() says which function raised it.
class KernelRaisedError : public KernelhubError {
 public:
  KernelRaisedError(const std::string& function, std::string kind, std::string kernel_message, std::string backtrace)
      : KernelhubError(ErrorCode::kKernelRaised, "`" + function + "` raised " + kind + ": " + kernel_message),
        kind_(std::move(kind)),
        kernel_message_(std::move(kernel_message)),
        backtrace_(std::move(backtrace)) {}
  const std::string& kind() const { return kind_; }
  const std::string& kernel_message() const { return kernel_message_; }
  const std::string& backtrace() const { return backtrace_; }

 private:
  std::string kind_;
  std::string kernel_message_;
  std::string backtrace_;
};

}  // namespace kernelhub
