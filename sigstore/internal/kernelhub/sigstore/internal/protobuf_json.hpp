// Reading protobuf-specs messages from their JSON form (what `protojson` writes: lowerCamelCase
// names, 64-bit integers as strings or numbers, bytes as base64), with errors that name the field
// by its path in the document, e.g. `bundle: verificationMaterial.tlogEntries[0].logIndex`.
// Fields this library does not read are ignored, as protobuf readers ignore them.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "kernelhub/base/result.hpp"

namespace kernelhub::sigstore::protobuf_json {

// The deepest nesting a bundle or trusted root needs is 7 levels; input nested deeper than this
// is refused before it reaches the (recursive) parser.
inline constexpr int kMaxNesting = 32;

// Parses `text` as one JSON object. `document` names it in errors ("bundle", "trusted root").
// Errors: kCorruptFile (not JSON, nested deeper than kMaxNesting, not an object).
Result<nlohmann::json> parse_object(std::string_view text, std::string_view document);

// A field of an object, its path (for errors) beside it.
struct Field {
  const nlohmann::json* value = nullptr;  // null: absent (or JSON null, which protobuf reads as absent)
  std::string path;
};

// `parent`'s member `name`; `parent_path` is the parent's own path.
Field field(const nlohmann::json& parent, std::string_view parent_path, std::string_view name);
// The `index`th element of the array `array` at `path`.
Field element(const nlohmann::json& array, std::string_view path, std::size_t index);

// Errors of every reader below: kCorruptFile naming the path, what was expected and what was found.
// A required field that is absent is an error; an optional one gives nullopt / an empty value.
Status require_present(const Field& f);
Result<const nlohmann::json*> object(const Field& f);           // required object
Result<const nlohmann::json*> optional_object(const Field& f);  // null when absent
Result<const nlohmann::json*> optional_array(const Field& f);   // null when absent
// A required array with at least one element; `why` says what an empty one would mean.
Result<const nlohmann::json*> nonempty_array(const Field& f, std::string_view why);
Result<std::string> string(const Field& f);  // required string
Result<std::optional<std::string>> optional_string(const Field& f);
Result<std::string> bytes(const Field& f);  // required base64 bytes
Result<std::optional<std::string>> optional_bytes(const Field& f);
Result<std::int64_t> int64(const Field& f);  // required int64 ("123" or 123)
Result<std::optional<std::int64_t>> optional_int64(const Field& f);

// base64 as protobuf's JSON writes bytes: the standard or URL-safe alphabet, padded or not; line
// breaks are skipped.
std::optional<std::string> decode_base64(std::string_view text);

// An error about the field at `path`: "<path> <what>".
Error corrupt(std::string_view path, std::string_view what);

}  // namespace kernelhub::sigstore::protobuf_json
