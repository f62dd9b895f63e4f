#include "hub_reads.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <optional>

#include "hub_answers.hpp"
#include "hub_errors.hpp"
#include "kernelhub/base/internal/atomic_file.hpp"
#include "kernelhub/base/internal/hub_names.hpp"
#include "kernelhub/base/internal/percent_encoding.hpp"
#include "kernelhub/base/internal/read_file.hpp"
#include "kernelhub/client/internal/cache_layout.hpp"
#include "url.hpp"

namespace kernelhub::client {

namespace fs = std::filesystem;

namespace {

bool is_short_commit(std::string_view text) {
  return text.size() >= 5 && text.size() < 40 &&
         std::all_of(text.begin(), text.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// Rebuilds a tree from snapshots/<commit>/ (symlink targets name the blobs), for a cache that
// huggingface_hub filled file by file without writing trees/.
Result<RepoTree> tree_from_snapshot(const CacheLayout& layout, std::string_view commit) {
  const fs::path root = layout.snapshot_dir(commit);
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return unexpected(ErrorCode::kOfflineMiss, "no snapshot");
  RepoTree tree;
  tree.commit = std::string(commit);
  for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code entry_ec;
    const bool link = it->is_symlink(entry_ec);
    struct stat st {};
    if (::stat(it->path().c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;  // dangling or a folder
    TreeEntry entry;
    entry.path = it->path().lexically_relative(root).generic_string();
    const std::string etag = link ? fs::read_symlink(it->path(), entry_ec).filename().string() : "";
    entry.size = static_cast<std::uint64_t>(st.st_size);
    if (etag.size() == 64) {
      entry.lfs_sha256 = etag;
    } else {
      entry.blob_id = etag;
    }
    tree.files.push_back(std::move(entry));
  }
  std::sort(tree.files.begin(), tree.files.end(),
            [](const TreeEntry& a, const TreeEntry& b) { return a.path < b.path; });
  return tree;
}

}  // namespace

Result<std::string> resolve_commit(HubCall& call, const RepoId& repo, RepoType type, std::string_view revision) {
  const CacheLayout layout(call.settings.cache_dir(type), type, repo);
  What what{repo_label(repo, type), std::string(revision), ""};
  if (!hub_names::validate_revision(revision)) {
    return unexpected(ErrorCode::kInvalidArgument, "`" + std::string(revision) + "` is not a valid revision for " +
                                                       what.repo + " (expected a branch, tag, v<N> or commit)");
  }
  if (is_commit_hash(revision)) return std::string(revision);
  auto from_cache = [&]() -> Result<std::optional<std::string>> {
    KH_ASSIGN_OR_RETURN(std::optional<std::string> commit, layout.read_ref(revision));
    if (commit) return commit;
    if (is_short_commit(revision)) {
      std::optional<std::string> match;
      for (const auto& snapshot : layout.list_snapshots()) {
        if (!snapshot.starts_with(revision)) continue;
        if (match) return std::optional<std::string>();  // ambiguous
        match = snapshot;
      }
      return match;
    }
    return std::optional<std::string>();
  };
  if (call.settings.offline) {
    KH_ASSIGN_OR_RETURN(std::optional<std::string> commit, from_cache());
    if (commit) return *commit;
    return unexpected(offline_miss(layout, "revision `" + std::string(revision) + "` of " + what.repo));
  }
  const std::string target = call.settings.endpoint + "/api/" + std::string(api_segment(type)) + "/" +
                             repo.to_string() + "/revision/" + percent_encode(revision);
  auto body = call.get(target, what);
  if (!body) {
    // Like huggingface_hub: an unreachable Hub falls back to the cache; a clear "no" does not.
    if (body.error().code == ErrorCode::kNetwork) {
      KH_ASSIGN_OR_RETURN(std::optional<std::string> commit, from_cache());
      if (commit) {
        call.state.fallback(fallback_note(body.error(), "using the cached commit " + *commit + " for revision `" +
                                                            std::string(revision) + "` of " + what.repo));
        return *commit;
      }
      Error error = body.error();
      error.message += ". Nothing cached answers it either: " + offline_inventory(layout);
      return unexpected(std::move(error));
    }
    return unexpected(body.error());
  }
  auto commit = parse_revision_answer(*body);
  if (!commit) {
    return unexpected(
        commit.error().with_context("the Hub's answer for " + what.describe() + " (`" + url::redact(target) + "`)"));
  }
  if (revision != *commit) (void)layout.write_ref(revision, *commit);  // best effort: the cache may be read-only
  return std::move(*commit);
}

Result<RepoTree> list_tree(HubCall& call, const RepoId& repo, RepoType type, std::string_view commit) {
  const CacheLayout layout(call.settings.cache_dir(type), type, repo);
  const auto file = layout.tree_path(commit);
  if (auto kept = call.state.trees().find(file)) return *kept;
  if (auto text = read_file(file)) {
    auto tree = RepoTree::from_cache_json(commit, *text);
    if (tree) {
      call.state.trees().keep(file, *tree);
      return tree;
    }
  }
  What what{repo_label(repo, type), std::string(commit), ""};
  if (call.settings.offline) {
    auto tree = tree_from_snapshot(layout, commit);
    if (tree) return tree;
    return unexpected(offline_miss(layout, "commit `" + std::string(commit) + "` of " + what.repo));
  }
  RepoTree tree;
  tree.commit = std::string(commit);
  std::string target = call.settings.endpoint + "/api/" + std::string(api_segment(type)) + "/" + repo.to_string() +
                       "/tree/" + percent_encode(commit) + "?recursive=true&expand=false";
  for (int page = 0; page < 100000; ++page) {
    Response head;
    auto got = call.get(target, what, &head);
    if (!got && got.error().code == ErrorCode::kNetwork) {
      // The snapshot a cache filled file by file (huggingface_hub writes no trees/) lists it too.
      if (auto cached = tree_from_snapshot(layout, commit)) {
        call.state.fallback(fallback_note(
            got.error(), "listing commit " + std::string(commit) + " of " + what.repo + " from its cached snapshot"));
        return cached;
      }
    }
    KH_ASSIGN_OR_RETURN(std::string body, std::move(got));
    auto files = parse_tree_page(body, &tree.unsafe);
    if (!files) return unexpected(files.error().with_context("the tree listing of " + what.describe()));
    std::move(files->begin(), files->end(), std::back_inserter(tree.files));
    auto next = next_link(head);
    if (!next) break;
    KH_ASSIGN_OR_RETURN(target, url::resolve(target, *next));
  }
  const auto by_path = [](const TreeEntry& a, const TreeEntry& b) { return a.path < b.path; };
  std::sort(tree.files.begin(), tree.files.end(), by_path);
  std::sort(tree.unsafe.begin(), tree.unsafe.end(), by_path);
  if (write_file_atomic(file, tree.to_cache_json())) call.state.trees().keep(file, tree);  // the cache: best effort
  return tree;
}

}  // namespace kernelhub::client
