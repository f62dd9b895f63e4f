// RepoKey: which repository a request is about: its type (model, dataset, space, kernel) and
// its id (`namespace/name`, or a legacy single-segment `name`).
//
// The type's spellings (URL prefix, API segment, `type` field) are base/repo_type.hpp's.
// parse_repo_key() accepts exactly what huggingface_hub's `validate_repo_id` accepts, so nothing a
// client could not have produced ever reaches the store.
//
// Thread safety: value types.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "kernelhub/base/repo_type.hpp"
#include "kernelhub/base/result.hpp"

namespace kernelhub::server {

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
