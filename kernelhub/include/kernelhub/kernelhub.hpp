// kernelhub: get GPU kernels from a Hub into a running C++ program.
//   auto kernel = kernelhub::get_kernel("org/name", {.version = 1});
//   kernel.op<void(at::Tensor&, const at::Tensor&)>("silu_and_mul").call(out, x);
// get_kernel picks the variant of the repo's build/ that runs here, downloads it into the Hugging
// Face cache, verifies it, checks that it can load in this process and loads it, after the kernels
// it depends on (metadata.json `kernel-depends`, fetched and loaded the same way); configuration
// comes from the environment (LOCAL_KERNELS, KERNELHUB_*, HF_*), read once per call. The stages
// alone: fetch.hpp, load.hpp. Errors are exceptions derived from KernelhubError, each saying what
// was asked, what was found and what to do. get_kernel may be called from several threads; a
// Kernel is immutable and its ops may be called from any thread.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "kernelhub/base/error.hpp"
#include "kernelhub/fetch.hpp"
#include "kernelhub/loader/op_library.hpp"
#include "kernelhub/op_signature.hpp"

namespace kernelhub {

struct GetKernelOptions {
  std::optional<std::string> revision;  // branch, tag or commit ...
  std::optional<int> version;           // ... or major version: branch v<N>
  std::optional<std::string> backend;   // "cpu", or the backend torch was built for
  bool offline = false;                 // the cache only, no request (also HF_HUB_OFFLINE=1)
  bool trust_remote_code = false;       // else: orgs the Hub trusts, KERNELHUB_TRUSTED, trusted_repos
  std::vector<std::string> trusted_repos;
  std::optional<std::filesystem::path> lockfile;  // kernels.lock: the locked commit, its hash checked
  bool require_signature = false;                 // refuse unsigned variants (KERNELHUB_TRUSTED_KEYS)
};

class Kernel;
// Loads `repo_id` ("org/name"), or the directory LOCAL_KERNELS names for it.
Kernel get_kernel(std::string_view repo_id, const GetKernelOptions& options = {});
// Loads the best variant under `path`: path/<variant>/, path/build/<variant>/, or path itself.
Kernel get_local_kernel(const std::filesystem::path& path, std::optional<std::string> backend = std::nullopt);

class Kernel {
 public:
  const std::vector<loader::OpInfo>& ops() const;  // each op's name and schema

  // A typed handle, checked against the op's schema (arguments, their types, optionality and
  // mutability, returns) and registered C++ signature: else NotFoundError or OpSchemaMismatchError.
  template <typename Signature>
  c10::TypedOperatorHandle<Signature> op(std::string_view name) const {
    const CppSignature signature = CppSignature::of<Signature>();
    const c10::OperatorHandle handle = checked(name, signature);
    try {
      return handle.typed<Signature>();
    } catch (const c10::Error& e) {
      refuse(name, handle, signature, e.what_without_backtrace());
    }
  }
  // Calls an op with boxed arguments (checked against its schema first); returns its outputs.
  template <typename... Args>
  std::vector<c10::IValue> call(std::string_view name, Args&&... args) const {
    torch::jit::Stack stack;
    (stack.emplace_back(std::forward<Args>(args)), ...);
    call_boxed(name, stack);
    return stack;
  }
  const std::string& ns() const;              // op namespace = metadata.json `id`
  const std::string& variant() const;         // e.g. torch215-cxx11-cpu-x86_64-linux
  const std::string& revision() const;        // the commit, or "local"
  const std::filesystem::path& path() const;  // the variant directory
  const Metadata& metadata() const;
  const std::vector<resolver::Decision>& decisions() const;  // every variant, best first
  const LoadTimings& timings() const;                        // where the time of the load went
  // The kernels its metadata.json `kernel-depends` names, loaded before it (each with its own).
  const std::vector<Kernel>& dependencies() const;
  // What the load took from the cache because the Hub could not be reached, one sentence each
  // (fetch.hpp FetchedVariant::fallbacks); empty when the Hub answered everything it was asked.
  const std::vector<std::string>& fallbacks() const;

 private:
  friend struct KernelFactory;  // load.hpp
  struct State;
  explicit Kernel(std::shared_ptr<const State> state) : state_(std::move(state)) {}
  c10::OperatorHandle checked(std::string_view name, const CppSignature& signature) const;
  [[noreturn]] void refuse(std::string_view name, const c10::OperatorHandle& handle, const CppSignature& signature,
                           std::string_view why) const;
  void call_boxed(std::string_view name, torch::jit::Stack& stack) const;
  std::shared_ptr<const State> state_;
};

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
KERNELHUB_ERROR(NoCompatibleVariantError, KernelhubError);  // variants exist, none runs here: the trace
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

}  // namespace kernelhub
