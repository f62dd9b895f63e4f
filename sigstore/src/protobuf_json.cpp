#include "kernelhub/sigstore/internal/protobuf_json.hpp"

#include <charconv>
#include <limits>
#include <nlohmann/json.hpp>

#include "kernelhub/base/internal/base64.hpp"
#include "kernelhub/base/internal/json_nesting.hpp"

namespace kernelhub::sigstore::protobuf_json {

namespace {

using nlohmann::json;

// A short rendering of what was found, for an error message.
std::string found(const json& value) {
  std::string text = value.dump();
  if (text.size() > 48) text = text.substr(0, 45) + "...";
  return std::string(value.type_name()) + " " + text;
}

Error wrong_type(const Field& f, std::string_view wanted) {
  return corrupt(f.path, "must be " + std::string(wanted) + ", not " + found(*f.value));
}

}  // namespace

Error corrupt(std::string_view path, std::string_view what) {
  return Error{ErrorCode::kCorruptFile, "`" + std::string(path) + "` " + std::string(what)};
}

Result<json> parse_object(std::string_view text, std::string_view document) {
  if (!json_nesting_within(text, kMaxNesting)) {
    return unexpected(ErrorCode::kCorruptFile, std::string(document) + " is nested more than " +
                                                   std::to_string(kMaxNesting) + " levels deep: not a " +
                                                   std::string(document));
  }
  json value = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) return unexpected(ErrorCode::kCorruptFile, std::string(document) + " is not valid JSON");
  if (!value.is_object()) {
    return unexpected(ErrorCode::kCorruptFile,
                      std::string(document) + " must be a JSON object, not " + std::string(value.type_name()));
  }
  return value;
}

Field field(const json& parent, std::string_view parent_path, std::string_view name) {
  Field f{nullptr, std::string(parent_path) + "." + std::string(name)};
  if (!parent.is_object()) return f;
  const auto it = parent.find(name);
  if (it != parent.end() && !it->is_null()) f.value = &*it;
  return f;
}

Field element(const json& array, std::string_view path, std::size_t index) {
  return Field{&array.at(index), std::string(path) + "[" + std::to_string(index) + "]"};
}

Status require_present(const Field& f) {
  if (f.value == nullptr) return unexpected(corrupt(f.path, "is missing"));
  return {};
}

Result<const json*> object(const Field& f) {
  KH_RETURN_IF_ERROR(require_present(f));
  if (!f.value->is_object()) return unexpected(wrong_type(f, "an object"));
  return f.value;
}

Result<const json*> optional_object(const Field& f) {
  if (f.value == nullptr) return static_cast<const json*>(nullptr);
  return object(f);
}

Result<const json*> optional_array(const Field& f) {
  if (f.value == nullptr) return static_cast<const json*>(nullptr);
  if (!f.value->is_array()) return unexpected(wrong_type(f, "an array"));
  return f.value;
}

Result<const json*> nonempty_array(const Field& f, std::string_view why) {
  KH_ASSIGN_OR_RETURN(const json* array, optional_array(f));
  if (array == nullptr || array->empty()) return unexpected(corrupt(f.path, "is empty: " + std::string(why)));
  return array;
}

Result<std::string> string(const Field& f) {
  KH_RETURN_IF_ERROR(require_present(f));
  if (!f.value->is_string()) return unexpected(wrong_type(f, "a string"));
  return f.value->get<std::string>();
}

Result<std::optional<std::string>> optional_string(const Field& f) {
  if (f.value == nullptr) return std::optional<std::string>();
  KH_ASSIGN_OR_RETURN(auto text, string(f));
  return std::optional<std::string>(std::move(text));
}

std::optional<std::string> decode_base64(std::string_view text) {
  // Line breaks are skipped, as Go's and Python's decoders skip them (`base64` wraps its output at
  // 76 columns, and bundles edited with it carry them).
  std::string standard;
  standard.reserve(text.size());
  for (const char c : text) {
    if (c == '\n' || c == '\r') continue;
    standard.push_back(c == '-' ? '+' : c == '_' ? '/' : c);
  }
  if (auto exact = base64_decode(standard)) return exact;
  return base64_decode_lenient(standard);
}

Result<std::string> bytes(const Field& f) {
  KH_ASSIGN_OR_RETURN(auto text, string(f));
  auto decoded = decode_base64(text);
  if (!decoded) {
    return unexpected(corrupt(f.path, "is not base64 (" + std::to_string(text.size()) + " characters starting `" +
                                          text.substr(0, 16) + "`)"));
  }
  return std::move(*decoded);
}

Result<std::optional<std::string>> optional_bytes(const Field& f) {
  if (f.value == nullptr) return std::optional<std::string>();
  KH_ASSIGN_OR_RETURN(auto decoded, bytes(f));
  return std::optional<std::string>(std::move(decoded));
}

Result<std::int64_t> int64(const Field& f) {
  KH_RETURN_IF_ERROR(require_present(f));
  const json& v = *f.value;
  if (v.is_number_integer()) {
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) {
      return unexpected(corrupt(f.path, "is out of the range of a 64-bit integer"));
    }
    return v.get<std::int64_t>();
  }
  if (v.is_string()) {
    const auto& text = v.get_ref<const std::string&>();
    std::int64_t out = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    if (ec == std::errc() && end == text.data() + text.size() && !text.empty() && text[0] != '+') return out;
  }
  return unexpected(wrong_type(f, "a 64-bit integer"));
}

Result<std::optional<std::int64_t>> optional_int64(const Field& f) {
  if (f.value == nullptr) return std::optional<std::int64_t>();
  KH_ASSIGN_OR_RETURN(auto n, int64(f));
  return std::optional<std::int64_t>(n);
}

}  // namespace kernelhub::sigstore::protobuf_json
