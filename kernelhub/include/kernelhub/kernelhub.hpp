// kernelhub: get GPU kernels from a Hub into a running C++ program.
//   auto kernel = kernelhub::get_kernel("org/name", {.version = 1});
//   kernel.op<void(at::Tensor&, const at::Tensor&)>("silu_and_mul").call(out, x);
// get_kernel picks the variant of the repo's build/ that runs here, downloads it into the Hugging
// Face cache, verifies it, checks that it can load in this process and loads it, after the kernels
// it depends on (metadata.json `kernel-depends`, fetched and loaded the same way); configuration
// comes from the environment (LOCAL_KERNELS, KERNELHUB_*, HF_*), read once per call. Without the
// load (and without LibTorch): kernelhub/fetch/fetch_kernel.hpp. Errors are exceptions derived from KernelhubError,
// each saying what was asked, what was found and what to do. get_kernel may be called from several threads; a Kernel is
// immutable and its ops may be called from any thread.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "kernelhub/fetch/errors.hpp"
#include "kernelhub/fetch/fetched_kernel.hpp"
#include "kernelhub/fetch/get_kernel_options.hpp"
#include "kernelhub/loader/op_info.hpp"
#include "kernelhub/op_signature.hpp"

namespace kernelhub {

class Kernel;
// Loads `repo_id` ("org/name"), or the directory LOCAL_KERNELS names for it.
Kernel get_kernel(std::string_view repo_id, const GetKernelOptions& options = {});
// Loads the best variant under `path`: path/<variant>/, path/build/<variant>/, or path itself.
Kernel get_local_kernel(const std::filesystem::path& path, std::optional<std::string> backend = std::nullopt);

class Kernel : public FetchedKernel {
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
  const std::string& ns() const;  // op namespace = metadata.json `id`
  // variant(), revision(), path(), metadata(), decisions(), timings(), warnings(): FetchedKernel's.
  // The kernels its metadata.json `kernel-depends` names, loaded before it (each with its own).
  const std::vector<Kernel>& dependencies() const;
  // What the load took from the cache because the Hub could not be reached, one sentence each;
  // empty when the Hub answered everything it was asked.
  const std::vector<std::string>& fallbacks() const;

 private:
  friend struct KernelFactory;  // the load stage's, not installed (kernelhub/src/kernel_factory.hpp)
  struct State;
  explicit Kernel(std::shared_ptr<const State> state);
  c10::OperatorHandle checked(std::string_view name, const CppSignature& signature) const;
  [[noreturn]] void refuse(std::string_view name, const c10::OperatorHandle& handle, const CppSignature& signature,
                           std::string_view why) const;
  void call_boxed(std::string_view name, torch::jit::Stack& stack) const;
  std::shared_ptr<const State> state_;
};

}  // namespace kernelhub
