// The Hub's naming rules, in one place for the client and the server: a repo id, a path in a
// repo, a revision a client asks for and a branch or tag name a server creates. Whatever a client
// sends or a Hub answers is checked here before it becomes a path, so a name can never reach a
// file outside the repo's folder (in the cache or in the server's store).
//
// Repo id: exactly what huggingface_hub's `validate_repo_id` accepts (utils/_validators.py),
// checked against it on generated ids (tests/python/test_hub_names_differential.py):
//   - `name` or `namespace/name`: at most one `/`;
//   - each part 1 to 96 characters of ASCII letters, digits, `_`, `-` and `.`, whose first and
//     last are a letter, a digit or `_` (its regex's word boundaries);
//   - no `--` or `..`;
//   - the id does not end with `.git` (a namespace may: `acme.git/norm` is valid).
// A kernel always lives under a namespace: client::RepoId requires one. The server stores
// single-part ids too, as the Hub does for legacy models (`gpt2`).
//
// Path in a repo: relative, `/`-separated, no empty, `.`, `..` or `.git` segment, no backslash,
// NUL or other control character, at most kMaxRepoPathBytes bytes and kMaxPathSegmentBytes a
// segment.
//
// Revision (what a client asks for, and keeps in its cache as refs/<revision>): a path by the
// rules above, so that a branch, a tag, `refs/pr/1`, `v1` or a commit is one. Branch or tag name
// (what a server creates): [A-Za-z0-9._/-], no `..` or `//`, not starting with `-` or `/`, not
// ending with `/` or `.`, no segment starting with `.` or ending with `.lock` (git's
// check-ref-format), at most kMaxRefNameBytes bytes. Every ref name is a revision.
//
// Errors: kInvalidArgument quoting the name (control bytes as \xNN, at most 200 bytes shown) and
// the rule it breaks.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "kernelhub/base/result.hpp"

namespace kernelhub::hub_names {

inline constexpr std::size_t kMaxRepoIdPartChars = 96;
inline constexpr std::size_t kMaxRepoPathBytes = 1024;
inline constexpr std::size_t kMaxPathSegmentBytes = 255;
inline constexpr std::size_t kMaxRefNameBytes = 200;

// A valid repo id's two parts; `ns` is empty for a single-part id. Views into the id.
struct RepoIdParts {
  std::string_view ns;
  std::string_view name;
};

// Checks `id` by the repo id rules and splits it.
Result<RepoIdParts> split_repo_id(std::string_view id);

Status validate_repo_path(std::string_view path);

// A folder as a request names it (`deletedFolder`, a tree path): `./` in front and `/` at the end
// dropped (`./a/b/` → `a/b`), then checked as a path.
Result<std::string> normalize_folder_path(std::string_view path);

Status validate_revision(std::string_view revision);

Status validate_ref_name(std::string_view name);

}  // namespace kernelhub::hub_names
