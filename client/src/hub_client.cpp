#include "kernelhub/client/internal/hub_client.hpp"

#include <algorithm>
#include <charconv>
#include <optional>

#include "client_state.hpp"
#include "hub_answers.hpp"
#include "hub_call.hpp"
#include "hub_errors.hpp"
#include "hub_reads.hpp"
#include "kernelhub/client/internal/cache_layout.hpp"

// The Hub's API as the rest of kernelhub sees it, each public call on a HubCall of its own:
// revisions and listings (hub_reads.cpp), version branches and publishers here, the downloads in
// file_download.cpp; how each request is made, retried and its errors read: hub_call.cpp.

namespace kernelhub::client {

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

// ---- revisions, refs, publishers, listings -------------------------------------------------

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
