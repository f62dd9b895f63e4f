// RepoKey: which repository a request is about: its type (model, dataset, space, kernel) and
// its id (`namespace/name`, or a legacy single-segment `name`).
//
// The type's spellings (URL prefix, API segment, `type` field) are base/repo_type.hpp's.
// parse_repo_key() accepts exactly what huggingface_hub's `validate_repo_id` accepts (the rules of
// base/hub_names.hpp, which the client shares), so nothing a client could not have produced ever
// reaches the store.
//
// Thread safety: value types.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "kernelhub/base/internal/repo_type.hpp"
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

// Builds a key from an id (`ns/name` or `name`). Errors: kInvalidArgument, with the rule broken.
Result<RepoKey> parse_repo_key(RepoType type, std::string_view id);

}  // namespace kernelhub::server
