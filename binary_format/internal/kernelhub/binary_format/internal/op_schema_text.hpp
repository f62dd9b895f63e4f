// An op's schema as text, read without LibTorch, and the C++ signature Kernel::op<...>() takes for
// it. The text is what torch prints for a schema and what TORCH_LIBRARY's def() takes:
//   rms_norm(Tensor(a!) out, Tensor input, Tensor? weight, float eps=1e-06) -> ()
// (a `ns::` prefix, an overload name, defaults, `*` and named returns are accepted). The C++ types
// follow c10's conventions: a tensor the op writes (`Tensor(a!)`) is `at::Tensor&`, one it reads
// `const at::Tensor&`, `Tensor?` is `const std::optional<at::Tensor>&`, `float` is `double`, `int`
// is `int64_t`, `int[]` is `at::IntArrayRef`, ... kernelhub/op_signature.hpp applies the same
// mapping to a registered schema, so `kernelhub describe-api` (no torch) and an op that does not
// fit (torch loaded) name the same signature.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kernelhub/base/result.hpp"

namespace kernelhub::binary_format {

struct SchemaArgument {
  std::string type;     // as written, without alias annotations: "Tensor", "Tensor?", "int[]"
  bool writes = false;  // an alias annotation with `!`: the op writes it
  std::string name;     // empty for an unnamed return
};

struct OpSchemaText {
  std::string name;  // without the namespace, with the overload if any ("add.out")
  std::vector<SchemaArgument> arguments;
  std::vector<SchemaArgument> returns;
};

// Errors: kCorruptFile saying what in `text` is not a schema.
Result<OpSchemaText> parse_op_schema(std::string_view text);

// The C++ type c10 passes an argument (or a return) of schema type `type` as.
std::string cpp_type_for(std::string_view type, bool is_return, bool writes);

// "void(at::Tensor&, const at::Tensor&, const std::optional<at::Tensor>&, double)".
std::string cpp_signature_for(const OpSchemaText& schema);

}  // namespace kernelhub::binary_format
