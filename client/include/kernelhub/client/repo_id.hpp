// RepoId: a Hub kernel repo's id, "org/name": the Hub's repo id rules (base/hub_names.hpp, those
// of huggingface_hub's `validate_repo_id`), and an org, since kernels always live under one. A
// hostile id can never become a path outside the cache.
#pragma once

#include <string>
#include <string_view>

#include "kernelhub/base/result.hpp"

namespace kernelhub::client {

struct RepoId {
  std::string org;
  std::string name;

  // Errors: kInvalidArgument quoting the id and the rule it breaks.
  static Result<RepoId> parse(std::string_view text);
  std::string to_string() const { return org + "/" + name; }
  bool operator==(const RepoId&) const = default;
};

}  // namespace kernelhub::client
