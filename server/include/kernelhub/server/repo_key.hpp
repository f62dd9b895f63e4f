// RepoKey: which repository a request is about: its type (model, dataset, space, kernel) and
// its id (`namespace/name`, or a legacy single-segment `name`).
//
// The Hub spells the type three ways and we need all of them: the URL prefix of file routes
// (`kernels/`, none for models), the API segment (`/api/kernels/...`) and the `type` field of
// `/api/repos/create`. parse() accepts exactly what huggingface_hub's `validate_repo_id` accepts,
// so nothing a client could not have produced ever reaches the store.
//
// Thread safety: value types.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "kernelhub/base/result.hpp"

namespace kernelhub::server {

enum class RepoType { kModel, kDataset, kSpace, kKernel };

// "model", "dataset", "space", "kernel".
std::string_view to_string(RepoType type);
// From the singular name ("kernel") as used by /api/repos/create; an empty name means model.
std::optional<RepoType> repo_type_from_name(std::string_view name);
// From the API segment ("kernels").
std::optional<RepoType> repo_type_from_api_segment(std::string_view segment);
// The file-route prefix: "" for models, "kernels/" for kernels, ...
std::string_view url_prefix(RepoType type);

struct RepoKey {
  RepoType type = RepoType::kModel;
  std::string ns;  // empty for a single-segment id
  std::string name;

  // `ns/name` or `name`.
  std::string id() const;
  friend bool operator==(const RepoKey&, const RepoKey&) = default;
  friend auto operator<=>(const RepoKey&, const RepoKey&) = default;
};

// Validates one part of a repo id (namespace or name) like huggingface_hub's validate_repo_id:
// 1-96 chars of [A-Za-z0-9_.-], no leading/trailing `-` or `.`, no `--` or `..`, no `.git` end.
// Errors: kInvalidArgument, naming the part and the rule it broke.
Status validate_repo_id_part(std::string_view part);

// Builds a key from an id (`ns/name` or `name`). Errors: kInvalidArgument.
Result<RepoKey> parse_repo_key(RepoType type, std::string_view id);

}  // namespace kernelhub::server
