#include "model_card.hpp"

#include <algorithm>
#include <iterator>

namespace kernelhub::server {
namespace {

// The license identifiers the Hub documents for the `license` field (its "Licenses" page).
constexpr std::string_view kLicenses[] = {"apache-2.0",
                                          "mit",
                                          "openrail",
                                          "bigscience-openrail-m",
                                          "creativeml-openrail-m",
                                          "bigscience-bloom-rail-1.0",
                                          "bigcode-openrail-m",
                                          "afl-3.0",
                                          "artistic-2.0",
                                          "bsl-1.0",
                                          "bsd",
                                          "bsd-2-clause",
                                          "bsd-3-clause",
                                          "bsd-3-clause-clear",
                                          "c-uda",
                                          "cc",
                                          "cc0-1.0",
                                          "cc-by-2.0",
                                          "cc-by-2.5",
                                          "cc-by-3.0",
                                          "cc-by-4.0",
                                          "cc-by-sa-3.0",
                                          "cc-by-sa-4.0",
                                          "cc-by-nc-2.0",
                                          "cc-by-nc-3.0",
                                          "cc-by-nc-4.0",
                                          "cc-by-nd-4.0",
                                          "cc-by-nc-nd-3.0",
                                          "cc-by-nc-nd-4.0",
                                          "cc-by-nc-sa-2.0",
                                          "cc-by-nc-sa-3.0",
                                          "cc-by-nc-sa-4.0",
                                          "cdla-sharing-1.0",
                                          "cdla-permissive-1.0",
                                          "cdla-permissive-2.0",
                                          "wtfpl",
                                          "ecl-2.0",
                                          "epl-1.0",
                                          "epl-2.0",
                                          "etalab-2.0",
                                          "eupl-1.1",
                                          "eupl-1.2",
                                          "agpl-3.0",
                                          "gfdl",
                                          "gpl",
                                          "gpl-2.0",
                                          "gpl-3.0",
                                          "lgpl",
                                          "lgpl-2.1",
                                          "lgpl-3.0",
                                          "isc",
                                          "h-research",
                                          "intel-research",
                                          "lppl-1.3c",
                                          "ms-pl",
                                          "apple-ascl",
                                          "apple-amlr",
                                          "mpl-2.0",
                                          "odc-by",
                                          "odbl",
                                          "openmdw-1.0",
                                          "openrail++",
                                          "osl-3.0",
                                          "postgresql",
                                          "ofl-1.1",
                                          "ncsa",
                                          "unlicense",
                                          "zlib",
                                          "pddl",
                                          "lgpl-lr",
                                          "deepfloyd-if-license",
                                          "fair-noncommercial-research-license",
                                          "llama2",
                                          "llama3",
                                          "llama3.1",
                                          "llama3.2",
                                          "llama3.3",
                                          "llama4",
                                          "grok2-community",
                                          "gemma",
                                          "unknown",
                                          "other"};

constexpr std::string_view kMissingMetadata =
    "Empty or missing yaml metadata in repo card (https://huggingface.co/docs/hub/model-cards#model-card-metadata)";

enum class Shape { kNull, kScalar, kSequence, kMapping };

struct TopLevelKey {
  std::string name;
  Shape shape = Shape::kNull;
  std::string scalar;  // kScalar: the text, unquoted
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::string unquote(std::string_view s) {
  if (s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front()) s = s.substr(1, s.size() - 2);
  return std::string(s);
}

// The top level of a YAML mapping: each `key:` at column 0 and the shape of its value. Enough to
// check the fields above without a YAML library; anything else at column 0 is an error.
bool top_level(std::string_view yaml, std::vector<TopLevelKey>& keys, std::string& error) {
  std::size_t line_no = 0;
  TopLevelKey* open = nullptr;  // a key whose value is on the following lines
  while (!yaml.empty()) {
    const std::size_t nl = yaml.find('\n');
    std::string_view line = yaml.substr(0, nl);
    yaml = nl == std::string_view::npos ? std::string_view() : yaml.substr(nl + 1);
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const std::string_view content = trim(line);
    if (content.empty() || content.front() == '#') continue;
    if (line.front() == ' ' || line.front() == '\t' || line.front() == '-') {
      if (line.front() == '\t') {
        error = "Invalid YAML in metadata: tab indentation on line " + std::to_string(line_no);
        return false;
      }
      if (open == nullptr) {
        if (line.front() == '-' && keys.empty()) {
          error = "Invalid metadata: the YAML block must be a mapping of keys, not a list";
          return false;
        }
        if (line.front() == '-') continue;  // a block sequence at column 0 under the last key
        continue;
      }
      if (open->shape == Shape::kNull) open->shape = content.front() == '-' ? Shape::kSequence : Shape::kMapping;
      continue;
    }
    std::size_t colon = content.find(':');
    if (content.front() == '"' || content.front() == '\'') colon = content.find(':', content.find(content.front(), 1));
    if (colon == std::string_view::npos) {
      error = "Invalid YAML in metadata: line " + std::to_string(line_no) + " is not `key: value`";
      return false;
    }
    TopLevelKey key;
    key.name = unquote(trim(content.substr(0, colon)));
    const std::string_view value = trim(content.substr(colon + 1));
    if (value.empty() || value.front() == '#') {
      key.shape = Shape::kNull;
    } else if (value.front() == '[') {
      key.shape = Shape::kSequence;
    } else if (value.front() == '{') {
      key.shape = Shape::kMapping;
    } else {
      key.shape = Shape::kScalar;
      key.scalar = unquote(value);
    }
    keys.push_back(std::move(key));
    open = keys.back().shape == Shape::kNull ? &keys.back() : nullptr;
  }
  return true;
}

std::string license_list() {
  std::string out = "[";
  for (std::size_t i = 0; i < std::size(kLicenses); ++i) out += (i ? ", " : "") + std::string(kLicenses[i]);
  return out + "]";
}

}  // namespace

CardCheck check_model_card(std::string_view content) {
  CardCheck check;
  if (content.starts_with("\xEF\xBB\xBF")) content.remove_prefix(3);  // BOM
  // Blank lines may come before the block, as huggingface_hub's own REGEX_YAML_BLOCK allows.
  while (!content.empty() &&
         (content.front() == '\n' || content.front() == '\r' || content.front() == ' ' || content.front() == '\t')) {
    content.remove_prefix(1);
  }
  const bool opens = content.starts_with("---\n") || content.starts_with("---\r\n");
  std::size_t end = opens ? content.find("\n---", 3) : std::string_view::npos;
  if (!opens || end == std::string_view::npos) {
    check.warnings.emplace_back(kMissingMetadata);
    return check;
  }
  const std::string_view yaml = content.substr(content.find('\n') + 1, end + 1 - (content.find('\n') + 1));
  std::vector<TopLevelKey> keys;
  std::string error;
  if (!top_level(yaml, keys, error)) {
    check.errors.push_back(error);
    return check;
  }
  if (keys.empty()) {
    check.warnings.emplace_back(kMissingMetadata);
    return check;
  }
  for (const TopLevelKey& key : keys) {
    if (key.name == "license" && key.shape == Shape::kScalar &&
        std::find(std::begin(kLicenses), std::end(kLicenses), key.scalar) == std::end(kLicenses)) {
      check.errors.push_back("\"license\" must be one of " + license_list());
    } else if (key.name == "license" && (key.shape == Shape::kMapping || key.shape == Shape::kSequence)) {
      check.errors.push_back("\"license\" must be a string");
    } else if (key.name == "model-index" && key.shape != Shape::kSequence && key.shape != Shape::kNull) {
      check.errors.push_back("\"model-index\" must be an array");
    } else if (key.name == "tags" && key.shape == Shape::kMapping) {
      check.errors.push_back("\"tags\" must be an array of strings");
    }
  }
  return check;
}

}  // namespace kernelhub::server
