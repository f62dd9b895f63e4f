#include "kernelhub/client/internal/repo_tree.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "kernelhub/base/internal/hub_names.hpp"
#include "kernelhub/base/internal/json_nesting.hpp"
#include "kernelhub/base/internal/printable.hpp"

namespace kernelhub::client {

std::vector<const TreeEntry*> RepoTree::under(std::string_view prefix) const {
  std::vector<const TreeEntry*> out;
  auto it = std::lower_bound(files.begin(), files.end(), prefix,
                             [](const TreeEntry& e, std::string_view p) { return e.path < p; });
  for (; it != files.end() && std::string_view(it->path).starts_with(prefix); ++it) out.push_back(&*it);
  return out;
}

std::vector<std::string> RepoTree::subfolders(std::string_view folder) const {
  const std::string prefix = std::string(folder) + "/";
  std::set<std::string> names;
  for (const TreeEntry* e : under(prefix)) {
    const std::string_view rest = std::string_view(e->path).substr(prefix.size());
    const auto slash = rest.find('/');
    if (slash != std::string_view::npos && slash > 0) names.emplace(rest.substr(0, slash));
  }
  return {names.begin(), names.end()};
}

Status RepoTree::check_no_unsafe_path(const std::vector<std::string>& prefixes,
                                      const std::vector<std::string>& asked) const {
  for (const TreeEntry& e : unsafe) {
    const bool wanted =
        prefixes.empty() ||
        std::any_of(prefixes.begin(), prefixes.end(), [&](const std::string& p) { return e.path.starts_with(p); }) ||
        std::find(asked.begin(), asked.end(), e.path) != asked.end();
    if (!wanted) continue;
    const auto why = hub_names::validate_repo_path(e.path);
    return unexpected(ErrorCode::kCorruptFile, "the listing of commit `" + commit +
                                                   "` has a file that cannot be stored safely: " +
                                                   (why ? printable(e.path, Lines::kEscaped) : why.error().message) +
                                                   "; nothing was downloaded. The repo's publisher must rename it");
  }
  return {};
}

std::string RepoTree::to_cache_json() const {
  nlohmann::json files_json = nlohmann::json::object();
  std::vector<const TreeEntry*> listed;
  for (const TreeEntry& e : files) listed.push_back(&e);
  for (const TreeEntry& e : unsafe) listed.push_back(&e);
  for (const TreeEntry* entry : listed) {
    const TreeEntry& e = *entry;
    nlohmann::json info = {{"size", e.size}, {"blob_id", e.blob_id}};
    if (e.lfs_sha256) {
      info["lfs_sha256"] = *e.lfs_sha256;
      info["lfs_size"] = e.size;
    }
    if (e.xet_hash) info["xet_hash"] = *e.xet_hash;
    files_json[e.path] = std::move(info);
  }
  nlohmann::json doc = {{"format_version", 1}, {"files", std::move(files_json)}};
  return doc.dump(1);
}

Result<RepoTree> RepoTree::from_cache_json(std::string_view commit, std::string_view text) {
  // The cache is three levels deep; a deeper file is not one we or huggingface_hub wrote.
  const bool shallow = json_nesting_within(text, 16);
  auto doc = shallow ? nlohmann::json::parse(text, nullptr, false) : nlohmann::json();
  if (!shallow || doc.is_discarded() || !doc.is_object() || !doc.contains("format_version") ||
      doc["format_version"] != 1 || !doc.contains("files") || !doc["files"].is_object()) {
    return unexpected(ErrorCode::kCorruptFile,
                      "tree cache for commit `" + std::string(commit) + "` is not format_version 1 JSON");
  }
  RepoTree tree;
  tree.commit = std::string(commit);
  for (auto& [path, info] : doc["files"].items()) {
    // Checked, not assumed: get<>() on the wrong type throws.
    if (!info.is_object() || !info.contains("size") || !info["size"].is_number_unsigned() ||
        !info.contains("blob_id") || !info["blob_id"].is_string()) {
      return unexpected(ErrorCode::kCorruptFile, "tree cache for commit `" + std::string(commit) + "`: entry `" + path +
                                                     "` lacks a non-negative integer size or a string blob_id");
    }
    TreeEntry e;
    e.path = path;
    e.size = info["size"].get<std::uint64_t>();
    e.blob_id = info["blob_id"].get<std::string>();
    if (info.contains("lfs_sha256") && info["lfs_sha256"].is_string())
      e.lfs_sha256 = info["lfs_sha256"].get<std::string>();
    if (info.contains("xet_hash") && info["xet_hash"].is_string()) e.xet_hash = info["xet_hash"].get<std::string>();
    // Note [Unsafe paths in a listing]: the cache holds what the Hub listed, and is read as it was.
    (hub_names::validate_repo_path(e.path) ? tree.files : tree.unsafe).push_back(std::move(e));
  }
  const auto by_path = [](const TreeEntry& a, const TreeEntry& b) { return a.path < b.path; };
  std::sort(tree.files.begin(), tree.files.end(), by_path);
  std::sort(tree.unsafe.begin(), tree.unsafe.end(), by_path);
  return tree;
}

}  // namespace kernelhub::client
