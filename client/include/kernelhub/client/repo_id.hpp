// RepoId: a Hub repository id, "org/name", validated the way huggingface_hub's
// `validate_repo_id` does, so that a hostile id can never become a path outside the cache.
//
// Rules (huggingface_hub utils/_validators.py): one `/` at most (we require exactly one: kernels
// always live under an org or user), 1..96 characters, [A-Za-z0-9] plus `-`, `_`, `.`; no
// `--` or `..`; no leading or trailing `-` or `.`; not ending in `.git`.
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
