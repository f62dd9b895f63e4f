// Signature: a kernel function's parameter and return types, read from the type schema that
// TVM-FFI exports beside a function built with TVM_FFI_DLL_EXPORT_INCLUDE_METADATA
// (`__tvm_ffi__metadata_<name>` returns {"type_schema": "<JSON>"}; the schema is
// {"type":"ffi.Function","named_args":{"return":[T],"params":[T, ...]}}, each T
// {"type":"DLTensor*"|"int"|"float"|"bool"|"Optional"|..., "args":[...]}).
//
// check() compares arguments with it before a call: their number, and each one's kind against its
// parameter (an int where a float is expected, and a bool where an int is, convert as TVM-FFI
// converts them; None fits only an Optional). A type kernelhub does not model ("ffi.Array", a
// user object) accepts any argument and leaves the check to the kernel.
//
// Thread safety: value types and pure functions.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernelhub/base/result.hpp"
#include "kernelhub/tvm_ffi_loader/argument.hpp"

namespace kernelhub::tvm_ffi_loader {

struct ParamType {
  std::string type;                  // the schema's name: "DLTensor*", "int", "Optional", ...
  std::vector<ParamType> args;       // Optional's inner type, a container's element types
  std::optional<ArgumentKind> kind;  // what it accepts; none when kernelhub does not model it
  bool optional = false;             // Optional[...]: None is accepted too

  bool accepts(ArgumentKind argument) const;
  std::string to_string() const;  // "Tensor", "Optional[Tensor]", "float", "ffi.Array[int]"
};

struct Signature {
  std::vector<ParamType> params;
  ParamType returns;

  // Errors: kCorruptFile when the metadata is not the JSON TVM-FFI writes.
  static Result<Signature> parse_metadata(std::string_view metadata_json);
  // "rms_norm_cpu(Tensor, Tensor, Optional[Tensor], float) -> None"
  std::string to_string(std::string_view name) const;
  // Errors: kOpSchemaMismatch naming the function, its signature, and the first argument that
  // does not fit (or the count); nothing was called.
  Status check(std::string_view name, std::span<const Argument> arguments) const;
};

// One function a kernel library exports, with its signature where it has one.
struct FunctionInfo {
  std::string name;                    // "rms_norm_cpu": exported as __tvm_ffi_rms_norm_cpu
  std::optional<Signature> signature;  // from __tvm_ffi__metadata_<name>, when the library has it
  std::string metadata_problem;        // why a metadata symbol gave no signature; empty otherwise
};

}  // namespace kernelhub::tvm_ffi_loader
