// Checking a C++ signature against an op's registered schema, before any call is made through it.
//
// c10 checks a typed handle only against the C++ signature an op was registered with, and ops
// registered without one (the Torch stable ABI's boxed kernels, STABLE_TORCH_LIBRARY) are called
// through any signature unchecked. Kernel::op<Signature>() therefore compares the signature with
// the schema itself: argument count, each argument's type and optionality, mutability (an
// argument the op writes, `Tensor(a!)`, must be a non-const reference), and the returns.
//
// Thread safety: pure functions.
#pragma once

#include <ATen/core/function_schema.h>
#include <ATen/core/op_registration/infer_schema.h>
#include <c10/util/Type.h>

#include <optional>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <vector>

namespace kernelhub {

// What a C++ function type says of an op call: the schema c10 infers from its types, plus what
// a schema cannot hold (which arguments are non-const references) and its printable form.
struct CppSignature {
  c10::FunctionSchema schema;
  std::vector<bool> mutable_refs;  // per argument: a non-const lvalue reference (at::Tensor&)
  std::string text;                // e.g. "void (at::Tensor&, at::Tensor const&)"

  template <typename Signature>
  static CppSignature of() {
    using Traits = c10::guts::infer_function_traits_t<Signature>;
    return CppSignature{c10::inferFunctionSchemaFlattenedReturns<Signature>(),
                        mutable_refs_of(static_cast<typename Traits::parameter_types*>(nullptr)),
                        c10::demangle(typeid(Signature).name())};
  }

 private:
  template <typename... Args>
  static std::vector<bool> mutable_refs_of(c10::guts::typelist::typelist<Args...>*) {
    return {(std::is_lvalue_reference_v<Args> && !std::is_const_v<std::remove_reference_t<Args>>)...};
  }
};

// What makes `cpp` unfit to call an op with `schema` (one line per difference, first the
// argument count); none when it fits.
std::optional<std::string> signature_mismatch(const c10::FunctionSchema& schema, const CppSignature& cpp);

// The C++ signature to write for `schema`, in c10's conventions, e.g.
// "void(at::Tensor&, const at::Tensor&, const std::optional<at::Tensor>&, double)".
std::string cpp_signature_for(const c10::FunctionSchema& schema);

}  // namespace kernelhub
