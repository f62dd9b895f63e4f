#include "kernelhub/tvm_ffi_loader/signature.hpp"

#include <nlohmann/json.hpp>

namespace kernelhub::tvm_ffi_loader {

namespace {

using nlohmann::json;

// The kind a schema type name accepts (TVM-FFI's StaticTypeKey names, and the C++ types its
// stl.h adds); none for containers and objects kernelhub does not model.
std::optional<ArgumentKind> kind_of_type(std::string_view type) {
  if (type == "DLTensor*" || type == "ffi.Tensor") return ArgumentKind::kTensor;
  if (type == "int") return ArgumentKind::kInt;
  if (type == "float") return ArgumentKind::kFloat;
  if (type == "bool") return ArgumentKind::kBool;
  if (type == "None") return ArgumentKind::kNone;
  if (type == "ffi.String" || type == "std::string" || type == "const char*") return ArgumentKind::kString;
  if (type == "Device") return ArgumentKind::kDevice;
  if (type == "DataType") return ArgumentKind::kDataType;
  return std::nullopt;
}

Result<ParamType> parse_type(const json& node) {
  if (!node.is_object() || !node.contains("type") || !node["type"].is_string()) {
    return unexpected(ErrorCode::kCorruptFile, "a type in the schema has no \"type\": " + node.dump());
  }
  ParamType out;
  out.type = node["type"].get<std::string>();
  if (node.contains("args")) {
    if (!node["args"].is_array()) return unexpected(ErrorCode::kCorruptFile, "\"args\" is not a list: " + node.dump());
    for (const json& arg : node["args"]) {
      KH_ASSIGN_OR_RETURN(ParamType inner, parse_type(arg));
      out.args.push_back(std::move(inner));
    }
  }
  if ((out.type == "Optional" || out.type == "std::optional") && out.args.size() == 1) {
    out.optional = true;
    out.kind = out.args[0].kind;
  } else {
    out.kind = kind_of_type(out.type);
  }
  return out;
}

}  // namespace

bool ParamType::accepts(ArgumentKind argument) const {
  if (argument == ArgumentKind::kNone && optional) return true;
  if (!kind) return true;  // not modelled here: the kernel checks it
  if (argument == *kind) return true;
  // TVM-FFI's own conversions: bool -> int, int -> float, int/bool -> bool.
  if (*kind == ArgumentKind::kInt) return argument == ArgumentKind::kBool;
  if (*kind == ArgumentKind::kFloat) return argument == ArgumentKind::kInt || argument == ArgumentKind::kBool;
  if (*kind == ArgumentKind::kBool) return argument == ArgumentKind::kInt;
  return false;
}

std::string ParamType::to_string() const {
  if (optional) return "Optional[" + args[0].to_string() + "]";
  std::string name = kind ? std::string(tvm_ffi_loader::to_string(*kind)) : type;
  if (!kind && !args.empty()) {
    name += "[";
    for (std::size_t i = 0; i < args.size(); ++i) name += (i ? ", " : "") + args[i].to_string();
    name += "]";
  }
  return name;
}

Result<Signature> Signature::parse_metadata(std::string_view metadata_json) {
  const auto corrupt = [&](const std::string& why) {
    return unexpected(ErrorCode::kCorruptFile, "the function's TVM-FFI metadata is not what TVM-FFI writes (" + why +
                                                   "): " + std::string(metadata_json.substr(0, 200)));
  };
  const json metadata = json::parse(metadata_json, nullptr, false);
  if (metadata.is_discarded() || !metadata.is_object()) return corrupt("not a JSON object");
  if (!metadata.contains("type_schema") || !metadata["type_schema"].is_string()) return corrupt("no \"type_schema\"");
  const json schema = json::parse(metadata["type_schema"].get<std::string>(), nullptr, false);
  if (schema.is_discarded() || !schema.is_object()) return corrupt("\"type_schema\" is not JSON");
  if (!schema.contains("named_args") || !schema["named_args"].is_object()) return corrupt("no \"named_args\"");
  const json& named = schema["named_args"];
  if (!named.contains("params") || !named["params"].is_array()) return corrupt("no \"params\" list");
  Signature out;
  for (const json& param : named["params"]) {
    auto type = parse_type(param);
    if (!type) return corrupt(type.error().message);
    out.params.push_back(std::move(*type));
  }
  if (named.contains("return") && named["return"].is_array() && !named["return"].empty()) {
    auto type = parse_type(named["return"][0]);
    if (!type) return corrupt(type.error().message);
    out.returns = std::move(*type);
  } else {
    out.returns = ParamType{"None", {}, ArgumentKind::kNone, false};
  }
  return out;
}

std::string Signature::to_string(std::string_view name) const {
  std::string out = std::string(name) + "(";
  for (std::size_t i = 0; i < params.size(); ++i) out += (i ? ", " : "") + params[i].to_string();
  return out + ") -> " + returns.to_string();
}

Status Signature::check(std::string_view name, std::span<const Argument> arguments) const {
  const auto mismatch = [&](const std::string& why) {
    return unexpected(ErrorCode::kOpSchemaMismatch, "`" + to_string(name) + "`: " + why + "; nothing was called");
  };
  if (arguments.size() != params.size()) {
    return mismatch("it takes " + std::to_string(params.size()) + " argument(s), " + std::to_string(arguments.size()) +
                    " given");
  }
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    if (!params[i].accepts(arguments[i].kind())) {
      return mismatch("argument " + std::to_string(i) + " must be " + params[i].to_string() + ", got " +
                      arguments[i].describe());
    }
  }
  return {};
}

}  // namespace kernelhub::tvm_ffi_loader
