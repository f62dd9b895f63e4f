// What `info`, `describe-api` and `variants` are asked about: a Hub repo (ORG/NAME) or a local
// kernel directory, and, for a repo, the version to read when none is named (its latest, as the
// `kernels` CLI reads it).
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "kernelhub/base/result.hpp"
#include "kernelhub/client/internal/hub_client.hpp"

namespace kernelhub::cli {

struct KernelTarget {
  std::optional<client::RepoId> repo;        // a Hub repo ...
  std::optional<std::filesystem::path> dir;  // ... or a directory
};

// `text` as a directory when one is there, else as a repo id. `hub_options`: --revision, --version
// or --all-versions were given, which a directory does not take. Errors: kInvalidArgument saying
// why, for the command's usage error.
Result<KernelTarget> kernel_target(const std::string& text, bool hub_options);

// The highest v<N> branch of `repo`; none when it has no version branch. Network (refs), or the
// cache's refs/ offline. Errors: the client's.
Result<std::optional<int>> latest_version(const client::HubClient& hub, const client::RepoId& repo);

}  // namespace kernelhub::cli
