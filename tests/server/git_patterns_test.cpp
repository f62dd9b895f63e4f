#include "kernelhub/server/internal/git_patterns.hpp"

#include <catch2/catch.hpp>
#include <string>

using namespace kernelhub::server;

TEST_CASE("wildmatch follows git's pathname rules", "[git_patterns]") {
  CHECK(wildmatch("*.bin", "model.bin"));
  CHECK_FALSE(wildmatch("*.bin", "dir/model.bin"));  // `*` stops at `/`
  CHECK(wildmatch("dir/*.bin", "dir/model.bin"));
  CHECK(wildmatch("**/x.bin", "x.bin"));
  CHECK(wildmatch("**/x.bin", "a/b/x.bin"));
  CHECK(wildmatch("saved_model/**/*", "saved_model/a/b/c.pb"));
  CHECK(wildmatch("saved_model/**/*", "saved_model/c.pb"));
  CHECK(wildmatch("a/**", "a/b/c"));
  CHECK_FALSE(wildmatch("a/**", "ab/c"));
  CHECK(wildmatch("a/**/b", "a/b"));
  CHECK(wildmatch("a/**/b", "a/x/y/b"));
  CHECK(wildmatch("*.tar.*", "data.tar.gz"));
  CHECK(wildmatch("*tfevents*", "events.out.tfevents.123"));
  CHECK(wildmatch("file?.txt", "file1.txt"));
  CHECK_FALSE(wildmatch("file?.txt", "file/.txt"));
  CHECK(wildmatch("[a-c]x", "bx"));
  CHECK_FALSE(wildmatch("[!a-c]x", "bx"));
  CHECK(wildmatch("[[:digit:]]*", "7z"));
  CHECK(wildmatch("\\*.md", "*.md"));
  CHECK_FALSE(wildmatch("\\*.md", "a.md"));
  CHECK(wildmatch("[unterminated", "[unterminated"));
}

TEST_CASE("wildmatch gives up on a pathological pattern instead of running for ever", "[git_patterns]") {
  const std::string pattern = "*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b";
  const std::string text(250, 'a');
  CHECK_FALSE(wildmatch(pattern, text));
}

TEST_CASE(".gitattributes: the last matching line decides, deeper files override", "[git_patterns]") {
  const auto root = GitAttributes::parse(
      "# comment\n"
      "*.bin filter=lfs diff=lfs merge=lfs -text\n"
      "*.png filter=lfs diff=lfs merge=lfs -text\r\n"
      "small.bin -filter\n"
      "docs/*.pdf filter=lfs\n"
      "folder/ filter=lfs\n"  // folder patterns match no file
      "!negated filter=lfs\n");
  CHECK(root.lfs("a.bin") == GitAttributes::Lfs::kSet);
  CHECK(root.lfs("deep/er/a.bin") == GitAttributes::Lfs::kSet);
  CHECK(root.lfs("small.bin") == GitAttributes::Lfs::kUnset);
  CHECK(root.lfs("image.png") == GitAttributes::Lfs::kSet);
  CHECK(root.lfs("docs/a.pdf") == GitAttributes::Lfs::kSet);
  CHECK(root.lfs("other/docs/a.pdf") == GitAttributes::Lfs::kUnspecified);  // anchored at the root
  CHECK(root.lfs("folder/x.txt") == GitAttributes::Lfs::kUnspecified);
  CHECK(root.lfs("README.md") == GitAttributes::Lfs::kUnspecified);

  const auto nested = GitAttributes::parse("*.bin -filter\n/top.txt filter=lfs\n", "sub");
  CHECK(nested.lfs("sub/a.bin") == GitAttributes::Lfs::kUnset);
  CHECK(nested.lfs("sub/top.txt") == GitAttributes::Lfs::kSet);
  CHECK(nested.lfs("top.txt") == GitAttributes::Lfs::kUnspecified);
  CHECK(nested.lfs("subway/a.bin") == GitAttributes::Lfs::kUnspecified);

  const std::vector<GitAttributes> files = {nested, root};
  CHECK_FALSE(is_lfs_by_attributes(files, "sub/a.bin"));
  CHECK(is_lfs_by_attributes(files, "a.bin"));
  CHECK(is_lfs_by_attributes(files, "sub/top.txt"));
  CHECK_FALSE(is_lfs_by_attributes(files, "notes.txt"));
}

TEST_CASE(".gitignore: anchoring, folders, negation", "[git_patterns]") {
  const auto ignore = GitIgnore::parse(
      "nested/*\n"
      "*.log\n"
      "!keep.log\n"
      "build/\n"
      "/only-root.txt\n"
      "\\#literal\n"
      "trailing   \n");
  CHECK(ignore.ignores("nested/file.bin"));
  CHECK_FALSE(ignore.ignores("nested"));
  CHECK(ignore.ignores("a/b/debug.log"));
  CHECK_FALSE(ignore.ignores("keep.log"));
  CHECK(ignore.ignores("build/x.o"));
  CHECK(ignore.ignores("src/build/x.o"));
  CHECK_FALSE(ignore.ignores("build"));  // a file named build: `build/` is for folders
  CHECK(ignore.ignores("only-root.txt"));
  CHECK_FALSE(ignore.ignores("sub/only-root.txt"));
  CHECK(ignore.ignores("#literal"));
  CHECK(ignore.ignores("trailing"));
  CHECK_FALSE(ignore.ignores("README.md"));

  // A file under an ignored folder cannot be re-included.
  const auto folder = GitIgnore::parse("logs/\n!logs/keep.txt\n");
  CHECK(folder.ignores("logs/keep.txt"));
  CHECK(GitIgnore::parse("").empty());
}
