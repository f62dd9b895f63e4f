// The two git pattern files the Hub reads when it decides how a file is uploaded:
//   .gitattributes  which paths are LFS (`filter=lfs`): preupload answers "lfs" for them;
//   .gitignore      which paths a commit leaves out: preupload answers `shouldIgnore`.
// Both use git's wildmatch with FNM_PATHNAME (`*` and `?` stop at `/`, `**` spans folders) and
// git's anchoring rule: a pattern with no `/` but a trailing one matches a name at any depth,
// any other pattern matches the path from the file's folder (mirrors git's
// Documentation/gitignore.txt and gitattributes.txt).
//
// Untrusted input: a pattern file is the repo's content. Lines longer than kMaxPatternBytes are
// skipped and every match has a step budget, so no pattern can make a request slow.
//
// Thread safety: value types and pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kernelhub::server {

inline constexpr std::size_t kMaxPatternBytes = 1024;

// git's wildmatch with WM_PATHNAME: `*`, `?`, `[...]` (ranges, `!`/`^` negation, [:class:]),
// `\` escapes, and `**` as a whole segment. Returns false when the step budget runs out.
bool wildmatch(std::string_view pattern, std::string_view text);

// The LFS rules of one .gitattributes file found in `folder` ("" for the repo root).
class GitAttributes {
 public:
  GitAttributes() = default;
  static GitAttributes parse(std::string_view text, std::string folder = {});

  // Whether the last line matching `path` (repo-relative) sets, unsets or leaves `filter`;
  // kUnspecified for paths outside this file's folder.
  enum class Lfs { kUnspecified, kSet, kUnset };
  Lfs lfs(std::string_view path) const;

 private:
  struct Rule {
    std::string pattern;
    bool basename_only = false;  // no `/` in the pattern: matches the file name at any depth
    Lfs lfs = Lfs::kUnspecified;
  };
  std::string folder_;
  std::vector<Rule> rules_;
};

// The rules of one .gitignore file (the repo root's: that is all the Hub's protocol carries).
class GitIgnore {
 public:
  GitIgnore() = default;
  static GitIgnore parse(std::string_view text);

  // Whether `path` (a file) is ignored: by its own last matching rule, or because one of its
  // folders is (git cannot re-include a file whose folder is excluded).
  bool ignores(std::string_view path) const;
  bool empty() const { return rules_.empty(); }

 private:
  struct Rule {
    std::string pattern;
    bool basename_only = false;
    bool negated = false;
    bool directory_only = false;
  };
  // nullopt-like tri-state: -1 no rule matched, 0 re-included, 1 ignored.
  int decide(std::string_view path, bool is_directory) const;
  std::vector<Rule> rules_;
};

// Whether `path` is LFS under a commit's .gitattributes files, given deepest folder first: the
// first file with a line about `path` decides, as in git (deeper files override shallower ones).
bool is_lfs_by_attributes(const std::vector<GitAttributes>& deepest_first, std::string_view path);

}  // namespace kernelhub::server
