#include "kernelhub/binary_format/internal/op_schema_text.hpp"

#include <cctype>

namespace kernelhub::binary_format {

namespace {

Unexpected not_a_schema(std::string_view text, std::string_view why) {
  return unexpected(ErrorCode::kCorruptFile,
                    "`" + std::string(text.substr(0, 200)) + "` is not an op schema: " + std::string(why));
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool is_identifier_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// The index of the bracket closing the one at `open`, skipping quoted defaults; npos if none.
std::size_t closing(std::string_view s, std::size_t open) {
  int depth = 0;
  char quote = 0;
  for (std::size_t i = open; i < s.size(); ++i) {
    const char c = s[i];
    if (quote) {
      if (c == '\\') {
        ++i;
      } else if (c == quote) {
        quote = 0;
      }
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '(' || c == '[') {
      ++depth;
    } else if ((c == ')' || c == ']') && --depth == 0) {
      return i;
    }
  }
  return std::string_view::npos;
}

// `s` split at its top-level commas.
Result<std::vector<std::string_view>> split_top_level(std::string_view s, std::string_view whole) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '(' || s[i] == '[' || s[i] == '\'' || s[i] == '"') {
      std::size_t end = s[i] == '(' || s[i] == '[' ? closing(s, i) : s.find(s[i], i + 1);
      if (end == std::string_view::npos) return not_a_schema(whole, "a bracket or quote is not closed");
      i = end;
    } else if (s[i] == ',') {
      parts.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  if (!trim(s).empty()) parts.push_back(trim(s.substr(start)));
  return parts;
}

// "Tensor(a!)? weight=None" → {"Tensor?", writes, "weight"}. A return may have no name.
Result<SchemaArgument> parse_argument(std::string_view text, bool named, std::string_view whole) {
  SchemaArgument out;
  std::size_t i = 0;
  while (i < text.size() && is_identifier_char(text[i])) out.type += text[i++];
  if (out.type.empty()) return not_a_schema(whole, "`" + std::string(text) + "` does not start with a type");
  while (i < text.size()) {
    if (text[i] == '(') {  // an alias annotation: (a), (a!), (a -> *)
      const std::size_t end = closing(text, i);
      if (end == std::string_view::npos) return not_a_schema(whole, "an alias annotation is not closed");
      out.writes = out.writes || text.substr(i, end - i).find('!') != std::string_view::npos;
      i = end + 1;
    } else if (text[i] == '?') {
      out.type += '?';
      ++i;
    } else if (text[i] == '[') {  // int[2] is an int list as much as int[] is
      const std::size_t end = closing(text, i);
      if (end == std::string_view::npos) return not_a_schema(whole, "a list type is not closed");
      out.type += "[]";
      i = end + 1;
    } else {
      break;
    }
  }
  std::string_view rest = trim(text.substr(i));
  if (const std::size_t eq = rest.find('='); eq != std::string_view::npos) rest = trim(rest.substr(0, eq));
  for (char c : rest) {
    if (!is_identifier_char(c)) return not_a_schema(whole, "`" + std::string(text) + "` is not `<type> <name>`");
  }
  if (named && rest.empty()) return not_a_schema(whole, "argument `" + std::string(text) + "` has no name");
  out.name = std::string(rest);
  return out;
}

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& part : parts) out += (out.empty() ? "" : ", ") + part;
  return out;
}

}  // namespace

Result<OpSchemaText> parse_op_schema(std::string_view text) {
  const std::string_view whole = trim(text);
  const std::size_t open = whole.find('(');
  if (open == std::string_view::npos) return not_a_schema(whole, "no `(`");
  const std::size_t close = closing(whole, open);
  if (close == std::string_view::npos) return not_a_schema(whole, "the arguments' `(` is not closed");
  OpSchemaText out;
  std::string_view name = trim(whole.substr(0, open));
  if (const std::size_t ns = name.rfind("::"); ns != std::string_view::npos) name.remove_prefix(ns + 2);
  for (char c : name) {
    if (!is_identifier_char(c) && c != '.') return not_a_schema(whole, "`" + std::string(name) + "` is not an op name");
  }
  if (name.empty()) return not_a_schema(whole, "no op name");
  out.name = std::string(name);
  KH_ASSIGN_OR_RETURN(auto arguments, split_top_level(whole.substr(open + 1, close - open - 1), whole));
  for (std::string_view argument : arguments) {
    if (argument == "*") continue;  // what follows is keyword-only: the same C++ parameters
    KH_ASSIGN_OR_RETURN(SchemaArgument parsed, parse_argument(argument, /*named=*/true, whole));
    out.arguments.push_back(std::move(parsed));
  }
  std::string_view returns = trim(whole.substr(close + 1));
  if (returns.substr(0, 2) != "->") return not_a_schema(whole, "no `->` after the arguments");
  returns = trim(returns.substr(2));
  if (returns.empty()) return not_a_schema(whole, "nothing after `->`");
  std::vector<std::string_view> listed{returns};
  if (returns.front() == '(') {
    if (closing(returns, 0) != returns.size() - 1) return not_a_schema(whole, "the returns' `(` is not closed");
    KH_ASSIGN_OR_RETURN(listed, split_top_level(returns.substr(1, returns.size() - 2), whole));
  }
  for (std::string_view value : listed) {
    KH_ASSIGN_OR_RETURN(SchemaArgument parsed, parse_argument(value, /*named=*/false, whole));
    out.returns.push_back(std::move(parsed));
  }
  return out;
}

std::string cpp_type_for(std::string_view type, bool is_return, bool writes) {
  if (type.ends_with("?")) {
    const std::string_view element = type.substr(0, type.size() - 1);
    if (element == "Tensor" && !is_return) return "const std::optional<at::Tensor>&";
    return "std::optional<" + cpp_type_for(element, true, false) + ">";
  }
  if (type.ends_with("[]")) {
    const std::string_view element = type.substr(0, type.size() - 2);
    if (element == "Tensor") return is_return ? "std::vector<at::Tensor>" : "at::TensorList";
    if (element == "int") return is_return ? "std::vector<int64_t>" : "at::IntArrayRef";
    if (element == "SymInt") return is_return ? "std::vector<c10::SymInt>" : "c10::SymIntArrayRef";
    const std::string inner = cpp_type_for(element, true, false);
    return is_return ? "std::vector<" + inner + ">" : "at::ArrayRef<" + inner + ">";
  }
  if (type == "Tensor") {
    if (is_return) return writes ? "at::Tensor&" : "at::Tensor";
    return writes ? "at::Tensor&" : "const at::Tensor&";
  }
  if (type == "float") return "double";
  if (type == "int") return "int64_t";
  if (type == "SymInt") return "c10::SymInt";
  if (type == "bool") return "bool";
  if (type == "str") return is_return ? "std::string" : "c10::string_view";
  if (type == "Scalar") return is_return ? "at::Scalar" : "const at::Scalar&";
  if (type == "ScalarType") return "at::ScalarType";
  if (type == "Device") return "at::Device";
  if (type == "Layout") return "at::Layout";
  if (type == "MemoryFormat") return "at::MemoryFormat";
  return std::string(type);
}

std::string cpp_signature_for(const OpSchemaText& schema) {
  std::vector<std::string> returns;
  for (const auto& r : schema.returns) returns.push_back(cpp_type_for(r.type, true, r.writes));
  std::string result = returns.empty()       ? "void"
                       : returns.size() == 1 ? returns.front()
                                             : "std::tuple<" + join(returns) + ">";
  std::vector<std::string> arguments;
  for (const auto& a : schema.arguments) arguments.push_back(cpp_type_for(a.type, false, a.writes));
  return result + "(" + join(arguments) + ")";
}

}  // namespace kernelhub::binary_format
