// Rules for names that come from clients and end up in storage: file paths inside a repo and
// branch/tag names. Everything a client sends is checked here before the store sees it, so a
// request can never name a file outside the repository (nor, since the store is
// content-addressed, outside --root).
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "kernelhub/base/result.hpp"

namespace kernelhub::server {

inline constexpr std::size_t kMaxRepoPathBytes = 1024;
inline constexpr std::size_t kMaxPathSegmentBytes = 255;
inline constexpr std::size_t kMaxRefNameBytes = 200;

// A file path inside a repo: relative, `/`-separated, no empty, `.`, `..` or `.git` segment, no
// backslash, NUL or other control character, at most kMaxRepoPathBytes bytes and
// kMaxPathSegmentBytes per segment. Errors: kInvalidArgument saying which rule was broken.
Status validate_repo_path(std::string_view path);

// Normalizes a folder path as sent in `deletedFolder` or a tree request (`a/b/` → `a/b`), then
// validates it like validate_repo_path. Errors: kInvalidArgument.
Result<std::string> normalize_folder_path(std::string_view path);

// A branch or tag name: [A-Za-z0-9._/-], no `..`, no empty segment, no leading `-`,
// at most kMaxRefNameBytes. Errors: kInvalidArgument.
Status validate_ref_name(std::string_view name);

}  // namespace kernelhub::server
