#include "kernelhub/op_signature.hpp"

#include <ATen/core/jit_type.h>

#include "kernelhub/binary_format/internal/op_schema_text.hpp"

namespace kernelhub {

namespace {

bool writes(const c10::Argument& argument) {
  return argument.alias_info() != nullptr && argument.alias_info()->isWrite();
}

bool same_type(const c10::TypePtr& a, const c10::TypePtr& b) {
  return a.get() == b.get() || *a == *b;
}

std::string ordinal(std::size_t i) {
  return std::to_string(i + 1);
}

// The C++ type c10 expects for an argument (or a return) of `type`: one mapping, on the schema
// type as written, for a registered op and for a schema read without torch (op_schema_text.hpp).
std::string cpp_type(const c10::TypePtr& type, bool is_return, bool mutable_arg) {
  return binary_format::cpp_type_for(type->str(), is_return, mutable_arg);
}

// "Tensor(a!) out", "float eps": the argument as its schema declares it.
std::string describe(const c10::Argument& argument) {
  return argument.real_type()->str() + (writes(argument) ? "(a!)" : "") + " " + argument.name();
}

}  // namespace

std::optional<std::string> signature_mismatch(const c10::FunctionSchema& schema, const CppSignature& cpp) {
  const auto& want = schema.arguments();
  const auto& have = cpp.schema.arguments();
  std::string out;
  auto add = [&out](std::string line) { out += (out.empty() ? "" : "\n") + std::move(line); };
  if (want.size() != have.size()) {
    add("the schema has " + std::to_string(want.size()) + " argument(s), the signature " + std::to_string(have.size()));
  } else {
    for (std::size_t i = 0; i < want.size(); ++i) {
      const auto& arg = want[i];
      const std::string where = "argument " + ordinal(i) + " (`" + describe(arg) + "`)";
      // type() is the type a call passes (an int for SymInt), as c10's own comparison has it.
      if (!same_type(arg.type(), have[i].type())) {
        add(where + " is " + arg.type()->str() + " in the schema but " + have[i].type()->str() +
            " in the signature; take it as `" + cpp_type(arg.real_type(), false, writes(arg)) + "`");
      } else if (writes(arg) && arg.type()->kind() == c10::TypeKind::TensorType && !cpp.mutable_refs.at(i)) {
        add(where +
            " is written by the op, so the signature must take it as `at::Tensor&`, not a const "
            "reference or a copy");
      }
    }
  }
  const auto& want_returns = schema.returns();
  const auto& have_returns = cpp.schema.returns();
  if (want_returns.size() != have_returns.size()) {
    add("the schema returns " + std::to_string(want_returns.size()) + " value(s), the signature " +
        std::to_string(have_returns.size()));
  } else {
    for (std::size_t i = 0; i < want_returns.size(); ++i) {
      if (!same_type(want_returns[i].type(), have_returns[i].type())) {
        add("return " + ordinal(i) + " is " + want_returns[i].type()->str() + " in the schema but " +
            have_returns[i].type()->str() + " in the signature");
      }
    }
  }
  if (out.empty()) return std::nullopt;
  return out;
}

std::string cpp_signature_for(const c10::FunctionSchema& schema) {
  std::string result;
  const auto& returns = schema.returns();
  if (returns.empty()) {
    result = "void";
  } else if (returns.size() == 1) {
    result = cpp_type(returns[0].real_type(), true, writes(returns[0]));
  } else {
    result = "std::tuple<";
    for (std::size_t i = 0; i < returns.size(); ++i) {
      result += (i ? ", " : "") + cpp_type(returns[i].real_type(), true, writes(returns[i]));
    }
    result += ">";
  }
  result += "(";
  const auto& arguments = schema.arguments();
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    result += (i ? ", " : "") + cpp_type(arguments[i].real_type(), false, writes(arguments[i]));
  }
  return result + ")";
}

}  // namespace kernelhub
