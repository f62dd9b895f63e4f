#include "hub_answers.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "kernelhub/base/internal/hub_names.hpp"
#include "kernelhub/base/internal/json_nesting.hpp"
#include "kernelhub/base/internal/printable.hpp"
#include "kernelhub/base/internal/sha256.hpp"
#include "kernelhub/client/internal/cache_layout.hpp"

namespace kernelhub::client {
namespace {

using nlohmann::json;

// No answer read here is nested deeper than a tree entry's `lfs` object (3 levels).
constexpr int kMaxAnswerDepth = 16;

Unexpected corrupt(std::string message) {
  return unexpected(ErrorCode::kCorruptFile, std::move(message));
}

Result<json> parse(std::string_view body, json::value_t expected, std::string_view what) {
  if (!json_nesting_within(body, kMaxAnswerDepth)) return corrupt(std::string(what) + " is nested too deeply");
  json doc = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || doc.type() != expected) {
    return corrupt(std::string(what) + " is not a JSON " + (expected == json::value_t::array ? "array" : "object"));
  }
  return doc;
}

// A field that must be a string when present; nullopt when absent.
Result<std::optional<std::string>> optional_string(const json& object, const char* key, std::string_view where) {
  if (!object.contains(key)) return std::optional<std::string>();
  if (!object[key].is_string()) return corrupt(std::string(where) + ": `" + key + "` is not a string");
  return std::optional<std::string>(object[key].get<std::string>());
}

Result<std::uint64_t> required_size(const json& object, std::string_view where) {
  if (!object.contains("size") || !object["size"].is_number_unsigned()) {
    return corrupt(std::string(where) + ": `size` is not a non-negative integer");
  }
  return object["size"].get<std::uint64_t>();
}

// One file of a listing; its path is checked by the caller (parse_tree_page).
Result<TreeEntry> parse_tree_file(const json& item, std::size_t index) {
  const std::string where = "entry " + std::to_string(index);
  TreeEntry entry;
  KH_ASSIGN_OR_RETURN(auto path, optional_string(item, "path", where));
  if (!path) return corrupt(where + " has no path");
  entry.path = std::move(*path);
  const std::string at = where + " (`" + printable(entry.path, Lines::kEscaped) + "`)";
  KH_ASSIGN_OR_RETURN(auto oid, optional_string(item, "oid", at));
  if (!oid || !is_lower_hex(*oid, 40)) return corrupt(at + ": `oid` is not a 40-hex git blob id");
  entry.blob_id = std::move(*oid);
  KH_ASSIGN_OR_RETURN(entry.size, required_size(item, at));
  if (item.contains("lfs") && !item["lfs"].is_null()) {
    const json& lfs = item["lfs"];
    if (!lfs.is_object()) return corrupt(at + ": `lfs` is not an object");
    KH_ASSIGN_OR_RETURN(auto sha256, optional_string(lfs, "oid", at + " lfs"));
    if (!sha256 || !is_lower_hex(*sha256, 64)) return corrupt(at + ": `lfs.oid` is not a 64-hex sha256");
    entry.lfs_sha256 = std::move(*sha256);
    if (lfs.contains("size")) {
      KH_ASSIGN_OR_RETURN(entry.size, required_size(lfs, at + " lfs"));
    }
  }
  if (item.contains("xetHash") && item["xetHash"].is_string() && is_lower_hex(item["xetHash"].get<std::string>(), 64)) {
    entry.xet_hash = item["xetHash"].get<std::string>();
  }
  return entry;
}

}  // namespace

Result<std::string> parse_revision_answer(std::string_view body) {
  KH_ASSIGN_OR_RETURN(json doc, parse(body, json::value_t::object, "the revision answer"));
  KH_ASSIGN_OR_RETURN(auto sha, optional_string(doc, "sha", "the revision answer"));
  if (!sha || !is_lower_hex(*sha, 40)) return corrupt("the revision answer has no 40-hex `sha`");
  return std::move(*sha);
}

Result<std::vector<BranchRef>> parse_refs_answer(std::string_view body) {
  KH_ASSIGN_OR_RETURN(json doc, parse(body, json::value_t::object, "the refs answer"));
  if (!doc.contains("branches") || !doc["branches"].is_array())
    return corrupt("the refs answer has no `branches` list");
  std::vector<BranchRef> branches;
  for (const auto& branch : doc["branches"]) {
    if (!branch.is_object()) return corrupt("the refs answer has a branch that is not an object");
    KH_ASSIGN_OR_RETURN(auto name, optional_string(branch, "name", "a branch"));
    KH_ASSIGN_OR_RETURN(auto commit, optional_string(branch, "targetCommit", "branch `" + name.value_or("") + "`"));
    if (!name || name->empty()) return corrupt("the refs answer has a branch without a name");
    branches.push_back({std::move(*name), commit && is_lower_hex(*commit, 40) ? std::move(*commit) : std::string()});
  }
  return branches;
}

Result<std::vector<TreeEntry>> parse_tree_page(std::string_view body, std::vector<TreeEntry>* unsafe) {
  KH_ASSIGN_OR_RETURN(json doc, parse(body, json::value_t::array, "the tree listing"));
  std::vector<TreeEntry> files;
  for (std::size_t i = 0; i < doc.size(); ++i) {
    const json& item = doc[i];
    if (!item.is_object()) return corrupt("entry " + std::to_string(i) + " of the tree listing is not an object");
    KH_ASSIGN_OR_RETURN(auto type, optional_string(item, "type", "entry " + std::to_string(i)));
    if (type != "file") continue;  // folders (and anything newer) carry nothing to download
    KH_ASSIGN_OR_RETURN(TreeEntry entry, parse_tree_file(item, i));
    if (auto safe = hub_names::validate_repo_path(entry.path); !safe) {
      if (unsafe == nullptr) return corrupt("entry " + std::to_string(i) + ": " + safe.error().message);
      unsafe->push_back(std::move(entry));  // Note [Unsafe paths in a listing] (repo_tree.hpp)
      continue;
    }
    files.push_back(std::move(entry));
  }
  return files;
}

Result<bool> parse_overview_answer(std::string_view body) {
  KH_ASSIGN_OR_RETURN(json doc, parse(body, json::value_t::object, "the organization overview"));
  if (!doc.contains("trustedKernelPublisher") || doc["trustedKernelPublisher"].is_null()) return false;
  if (!doc["trustedKernelPublisher"].is_boolean()) {
    return corrupt("the organization overview's `trustedKernelPublisher` is not a boolean");
  }
  return doc["trustedKernelPublisher"].get<bool>();
}

}  // namespace kernelhub::client
