#include "kernelhub/client/hub_client.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <charconv>
#include <optional>

#include "client_state.hpp"
#include "hub_answers.hpp"
#include "hub_call.hpp"
#include "hub_errors.hpp"
#include "hub_reads.hpp"
#include "kernelhub/base/atomic_file.hpp"
#include "kernelhub/base/hub_names.hpp"
#include "kernelhub/base/percent_encoding.hpp"
#include "kernelhub/base/read_file.hpp"
#include "kernelhub/client/cache_layout.hpp"
#include "url.hpp"

// The Hub's API as the rest of kernelhub sees it: revisions, version branches, publishers and
// listings here; the downloads in file_download.cpp; how each request is made in hub_call.cpp.

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

HubClient::HubClient(Settings settings, std::shared_ptr<Transport> transport, std::shared_ptr<ParsedTrees> trees)
    : settings_(std::move(settings)),
      transport_(std::move(transport)),
      state_(std::make_shared<ClientState>(trees ? std::move(trees) : std::make_shared<ParsedTrees>())) {}

HubClient::HubClient(Settings settings) : HubClient(std::move(settings), make_curl_transport()) {}

int HubClient::requests() const {
  return state_->requests();
}
std::vector<std::string> HubClient::fallbacks() const {
  return state_->fallbacks();
}
void HubClient::note_fallback(std::string note) const {
  state_->fallback(std::move(note));
}

// ---- revisions ---------------------------------------------------------------------------

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

Result<std::string> HubClient::resolve_revision(const RepoId& repo, RepoType type, std::string_view revision) const {
  HubCall call{settings_, *transport_, *state_};
  return resolve_commit(call, repo, type, revision);
}

Result<std::vector<std::string>> HubClient::list_versions(const RepoId& repo, RepoType type) const {
  auto version_number = [](std::string_view name) -> std::optional<int> {
    if (name.size() < 2 || name[0] != 'v') return std::nullopt;
    int n = 0;
    auto [end, ec] = std::from_chars(name.data() + 1, name.data() + name.size(), n);
    if (ec != std::errc() || end != name.data() + name.size()) return std::nullopt;
    return n;
  };
  std::vector<std::pair<int, std::string>> versions;
  const CacheLayout layout(settings_.cache_dir(type), type, repo);
  auto from_refs = [&] {
    for (const auto& ref : layout.list_refs()) {
      if (auto n = version_number(ref)) versions.emplace_back(*n, ref);
    }
  };
  const std::string label = repo_label(repo, type);
  if (settings_.offline) {
    from_refs();
    if (versions.empty()) return unexpected(offline_miss(layout, "the version branches of " + label));
  } else {
    HubCall call{settings_, *transport_, *state_};
    What what{label, "", ""};
    const std::string target =
        settings_.endpoint + "/api/" + std::string(api_segment(type)) + "/" + repo.to_string() + "/refs";
    auto body = call.get(target, what);
    if (!body) {
      if (body.error().code != ErrorCode::kNetwork) return unexpected(body.error());
      from_refs();
      if (versions.empty()) return unexpected(body.error());
      state_->fallback(fallback_note(body.error(), "listing the cached version branches of " + label));
    } else {
      auto branches = parse_refs_answer(*body);
      if (!branches) return unexpected(branches.error().with_context("the refs of " + what.repo));
      for (const auto& branch : *branches) {
        if (auto n = version_number(branch.name)) {
          versions.emplace_back(*n, branch.name);
          if (!branch.commit.empty()) (void)layout.write_ref(branch.name, branch.commit);
        }
      }
    }
  }
  std::sort(versions.begin(), versions.end());
  std::vector<std::string> out;
  for (auto& [n, name] : versions) out.push_back(std::move(name));
  return out;
}

Result<bool> HubClient::is_trusted_publisher(std::string_view org) const {
  HubCall call{settings_, *transport_, *state_};
  What what{"organization `" + std::string(org) + "`", "", ""};
  auto body = call.get(settings_.endpoint + "/api/organizations/" + std::string(org) + "/overview", what);
  if (!body) {
    // Mirrors kernels hf_hub.py: a publisher whose overview does not exist is untrusted.
    if (body.error().code == ErrorCode::kNotFound) return false;
    return unexpected(body.error());
  }
  auto trusted = parse_overview_answer(*body);
  if (!trusted) return unexpected(trusted.error().with_context("the overview of " + what.repo));
  return *trusted;
}

Result<RepoTree> HubClient::tree(const RepoId& repo, RepoType type, std::string_view commit) const {
  HubCall call{settings_, *transport_, *state_};
  return list_tree(call, repo, type, commit);
}

Result<std::vector<std::string>> HubClient::list_variants(const RepoId& repo, RepoType type,
                                                          std::string_view commit) const {
  KH_ASSIGN_OR_RETURN(RepoTree tree, this->tree(repo, type, commit));
  return tree.subfolders("build");
}

}  // namespace kernelhub::client
