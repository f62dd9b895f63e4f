// kernelhub: get GPU kernels from a Hub into a running C++ program.
//
//   auto kernel = kernelhub::get_kernel("kernelhub/reference-kernels", {.version = 1});
//   auto rms_norm = kernel.op<void(at::Tensor&, const at::Tensor&, const std::optional<at::Tensor>&, double)>("rms_norm");
//   rms_norm.call(out, x, weight, 1e-6);
//
// get_kernel detects this machine, picks the variant of the repo's build/ that runs here (the
// kernels package's rules, then this GPU and driver), downloads it into the Hugging Face cache,
// verifies it (signature when a key is trusted, lock hash, metadata.json digest), checks that the
// library can load in this process and loads it. Configuration is read once per call from the
// environment: LOCAL_KERNELS, KERNELHUB_*, HF_ENDPOINT, HF_TOKEN, HF_HOME, HF_HUB_CACHE,
// KERNELS_CACHE, HF_HUB_OFFLINE. Tools that need one stage alone: fetch.hpp, load.hpp.
//
// Errors are exceptions derived from KernelhubError, one class per failure a user can act on, each
// saying what was asked, what was found and what to do. Thread safety: get_kernel may be called
// from several threads; a Kernel is immutable and its ops may be called from any thread.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

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
  // Without it, only repos of orgs the Hub marks as trusted kernel publishers load (or listed in
  // KERNELHUB_TRUSTED, or in `trusted_repos`).
  bool trust_remote_code = false;
  std::vector<std::string> trusted_repos;
  std::optional<std::filesystem::path> lockfile;  // kernels.lock: the locked commit, its hash checked
  bool require_signature = false;  // refuse an unsigned variant (checked anyway when a key is trusted)
};

class Kernel;

// Loads `repo_id` ("org/name"), or the directory LOCAL_KERNELS names for it.
Kernel get_kernel(std::string_view repo_id, const GetKernelOptions& options = {});

// Loads the best variant under `path`: path/<variant>/, path/build/<variant>/, or path itself.
Kernel get_local_kernel(const std::filesystem::path& path, std::optional<std::string> backend = std::nullopt);

class Kernel {
 public:
  const std::vector<loader::OpInfo>& ops() const;  // each op's name and schema

  // A typed handle, checked against the op's schema (argument count, types, optionality, which
  // arguments the op writes, returns) and its registered C++ signature: NotFoundError, or
  // OpSchemaMismatchError naming the signature to write, before any call is made.
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

  const std::string& ns() const;               // op namespace = metadata.json `id`
  const std::string& variant() const;          // e.g. torch215-cxx11-cpu-x86_64-linux
  const std::string& revision() const;         // the commit, or "local"
  const std::filesystem::path& path() const;   // the variant directory
  const Metadata& metadata() const;
  const std::vector<resolver::Decision>& decisions() const;  // every variant, best first
  const LoadTimings& timings() const;          // where the time of the load went

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
struct InvalidArgumentError : KernelhubError { using KernelhubError::KernelhubError; };      // malformed input
struct NoCompatibleVariantError : KernelhubError { using KernelhubError::KernelhubError; };  // with the trace
struct CorruptFileError : KernelhubError { using KernelhubError::KernelhubError; };          // not what it claims
struct IntegrityError : KernelhubError { using KernelhubError::KernelhubError; };   // bytes differ from digest
struct IncompatibleBinaryError : KernelhubError { using KernelhubError::KernelhubError; };  // cannot load here
struct LoadError : KernelhubError { using KernelhubError::KernelhubError; };        // dlopen or registration
struct OfflineMissError : KernelhubError { using KernelhubError::KernelhubError; };  // lists what is cached
struct AccessError : KernelhubError { using KernelhubError::KernelhubError; };       // gated, or bad token
struct UntrustedPublisherError : KernelhubError { using KernelhubError::KernelhubError; };
struct SignatureError : KernelhubError { using KernelhubError::KernelhubError; };  // docs/SIGNING.md
struct MissingSignatureError : SignatureError { using SignatureError::SignatureError; };
struct OpSchemaMismatchError : KernelhubError { using KernelhubError::KernelhubError; };  // no call made
struct HubError : KernelhubError { using KernelhubError::KernelhubError; };  // network, I/O, the rest

}  // namespace kernelhub
