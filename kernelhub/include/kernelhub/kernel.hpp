// Kernel: a loaded Hub kernel variant and its ops, callable through the c10 dispatcher.
//
// Obtained from get_kernel() / get_local_kernel(). Cheap to copy (shares the loaded library).
// Thread safety: immutable; ops may be called from any thread, as any torch op.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kernelhub/loader/op_library.hpp"
#include "kernelhub/metadata.hpp"
#include "kernelhub/op_signature.hpp"
#include "kernelhub/resolver/select.hpp"

namespace kernelhub {

// Where the time of a get_kernel call went, in seconds.
struct LoadTimings {
  double resolve = 0;   // environment detection, revision → commit, listing, selection
  double download = 0;  // fetching missing files into the cache (0 when all were cached)
  double verify = 0;    // metadata.json digest check and ELF pre-flight
  double load = 0;      // dlopen and op registration
  int requests = 0;     // HTTP requests made (0 for a local or fully cached pinned load)
  // Bytes read to check digests, the signature and the lock entry: each file once, whatever the
  // number of checks (they share one FileDigests).
  std::uint64_t bytes_hashed = 0;
};

class Kernel {
 public:
  Kernel(std::shared_ptr<const loader::OpLibrary> library, Metadata metadata, std::string variant, std::string revision,
         std::filesystem::path path, std::vector<resolver::Decision> decisions)
      : library_(std::move(library)),
        metadata_(std::move(metadata)),
        variant_(std::move(variant)),
        revision_(std::move(revision)),
        path_(std::move(path)),
        decisions_(std::move(decisions)) {}

  // Ops registered by the kernel under its namespace, with their schemas.
  const std::vector<loader::OpInfo>& ops() const { return library_->ops(); }

  // A typed handle, e.g. op<void(at::Tensor&, const at::Tensor&, const at::Tensor&, double)>("rms_norm").
  // The signature is checked against the op's schema (op_signature.hpp), also for ops registered
  // without a C++ signature (the Torch stable ABI), and against the C++ signature the op was
  // registered with, if any. Throws NotFoundError when the kernel has no such op and
  // OpSchemaMismatchError, naming the schema and the signature to write, on any mismatch.
  template <typename Signature>
  c10::TypedOperatorHandle<Signature> op(std::string_view name) const {
    const c10::OperatorHandle handle = find_op(name);
    const CppSignature signature = CppSignature::of<Signature>();
    check_signature(name, handle, signature);
    try {
      return handle.typed<Signature>();
    } catch (const c10::Error& e) {
      raise_signature_mismatch(name, handle, signature, e.what_without_backtrace());
    }
  }

  // Calls an op with boxed arguments; returns its outputs. The arguments are checked against the
  // op's schema first (OpSchemaMismatchError); a missing op is a NotFoundError.
  template <typename... Args>
  std::vector<c10::IValue> call(std::string_view name, Args&&... args) const {
    torch::jit::Stack stack;
    (stack.emplace_back(std::forward<Args>(args)), ...);
    call_boxed(name, stack);
    return stack;
  }

  const std::string& ns() const { return library_->ns(); }
  const std::string& variant() const { return variant_; }      // e.g. torch215-cxx11-cpu-x86_64-linux
  const std::string& revision() const { return revision_; }    // commit, or "local"
  const std::filesystem::path& path() const { return path_; }  // the variant directory
  const Metadata& metadata() const { return metadata_; }
  const std::vector<resolver::Decision>& decisions() const { return decisions_; }
  const LoadTimings& timings() const { return timings_; }
  void set_timings(const LoadTimings& timings) { timings_ = timings; }

 private:
  c10::OperatorHandle find_op(std::string_view name) const;
  void check_signature(std::string_view name, const c10::OperatorHandle& handle, const CppSignature& signature) const;
  [[noreturn]] void raise_signature_mismatch(std::string_view name, const c10::OperatorHandle& handle,
                                             const CppSignature& signature, std::string_view why) const;
  void call_boxed(std::string_view name, torch::jit::Stack& stack) const;

  std::shared_ptr<const loader::OpLibrary> library_;
  Metadata metadata_;
  std::string variant_;
  std::string revision_;
  std::filesystem::path path_;
  std::vector<resolver::Decision> decisions_;
  LoadTimings timings_;
};

}  // namespace kernelhub
