#include "kernelhub/base/internal/hub_names.hpp"

#include <catch2/catch.hpp>
#include <random>
#include <string>

namespace kernelhub::hub_names {
namespace {

// Repo ids are also checked against huggingface_hub itself (tests/python/test_hub_names_differential.py).
TEST_CASE("repo ids: one or two parts, split at the `/`") {
  const auto two = split_repo_id("acme/rms-norm");
  REQUIRE(two);
  CHECK(two->ns == "acme");
  CHECK(two->name == "rms-norm");
  const auto one = split_repo_id("gpt2");
  REQUIRE(one);
  CHECK(one->ns.empty());
  CHECK(one->name == "gpt2");
  for (const char* good : {"a/b", "_/_", "Foo-BAR_foo.bar123/x", "acme.git/norm", "a-.b/c", "a.-b/c"}) {
    INFO(good);
    CHECK(split_repo_id(good));
  }
}

TEST_CASE("repo ids: 96 characters a part, not for the whole id") {
  const std::string part96(96, 'a');
  CHECK(split_repo_id(part96 + "/" + part96));
  CHECK(split_repo_id(part96));
  CHECK_FALSE(split_repo_id(part96 + "a/b"));
  CHECK_FALSE(split_repo_id("b/" + part96 + "a"));
  CHECK(split_repo_id("b/" + part96 + "a").error().message ==
        "`b/" + part96 + "a` is not a valid repo id: its name is longer than 96 characters");
}

TEST_CASE("repo ids: every rule says itself") {
  const auto why = [](std::string_view id) { return split_repo_id(id).error().message; };
  CHECK(why("a/b/c") ==
        "`a/b/c` is not a valid repo id: it has more than one `/` (a repo id is `name` or `namespace/name`)");
  CHECK(why("/b") == "`/b` is not a valid repo id: its namespace is empty");
  CHECK(why("a/") == "`a/` is not a valid repo id: its name is empty");
  CHECK(why("") == "`` is not a valid repo id: its name is empty");
  CHECK(why("a/b c") == "`a/b c` is not a valid repo id: only ASCII letters, digits, `-`, `_` and `.` are allowed");
  CHECK(why("a/caf\xc3\xa9") ==
        "`a/caf\xc3\xa9` is not a valid repo id: only ASCII letters, digits, `-`, `_` and `.` are allowed");
  CHECK(why("-a/b") == "`-a/b` is not a valid repo id: its namespace must start and end with a letter, a digit or `_`");
  CHECK(why("a/b.") == "`a/b.` is not a valid repo id: its name must start and end with a letter, a digit or `_`");
  CHECK(why("a--b/c") == "`a--b/c` is not a valid repo id: `--` and `..` are not allowed");
  CHECK(why("a/b..c") == "`a/b..c` is not a valid repo id: `--` and `..` are not allowed");
  CHECK(why("a/b.git") == "`a/b.git` is not a valid repo id: it must not end with `.git`");
  CHECK(why(std::string("a/b\0c", 5)) ==
        "`a/b\\x00c` is not a valid repo id: only ASCII letters, digits, `-`, `_` and `.` are allowed");
}

TEST_CASE("paths in a repo: relative, contained, within limits") {
  for (const char* good :
       {"README.md", "build/torch-cpu/_ops.py", "a b/c%20d.txt", ".gitattributes", "a..b/c", "x/.github/y"}) {
    INFO(good);
    CHECK(validate_repo_path(good));
  }
  const std::string long_segment(kMaxPathSegmentBytes + 1, 'a');
  std::string long_path;
  while (long_path.size() <= kMaxRepoPathBytes) long_path += "abcdefghi/";
  long_path += "x";
  for (const std::string& bad :
       {std::string(""), std::string("../etc/passwd"), std::string("a/../../b"), std::string("/abs"),
        std::string("a\\b"), std::string("a\0b", 3), std::string("a//b"), std::string("a/"), std::string("./a"),
        std::string("a/."), std::string(".git/config"), std::string("x/.git/y"), std::string("a\nb"),
        std::string("a\x7f"), long_segment, long_path}) {
    INFO("path: " << bad);
    const auto status = validate_repo_path(bad);
    REQUIRE_FALSE(status);
    CHECK(status.error().code == ErrorCode::kInvalidArgument);
  }
  CHECK(validate_repo_path(std::string(kMaxPathSegmentBytes, 'a')));
}

TEST_CASE("paths in a repo: every rule says itself") {
  CHECK(validate_repo_path("a/../b").error().message == "path `a/../b` is not allowed: it has a `.` or `..` segment");
  CHECK(validate_repo_path(std::string("a\0b", 3)).error().message ==
        "path `a\\x00b` is not allowed: it contains a NUL byte");
  CHECK(validate_repo_path("/etc/passwd").error().message ==
        "path `/etc/passwd` is not allowed: it is absolute; paths are relative to the repo root");
  CHECK(validate_repo_path("x/.git/y").error().message ==
        "path `x/.git/y` is not allowed: `.git` folders cannot be committed");
  const std::string long_path(kMaxRepoPathBytes + 1, 'a');
  CHECK(validate_repo_path(long_path).error().message ==
        "path `" + std::string(200, 'a') + "...` is not allowed: it is longer than 1024 bytes");
}

TEST_CASE("folders as requests name them are normalised, then checked as paths") {
  CHECK(*normalize_folder_path("build/") == "build");
  CHECK(*normalize_folder_path("./build/x//") == "build/x");
  CHECK_FALSE(normalize_folder_path("../x/"));
  CHECK_FALSE(normalize_folder_path("./"));
}

TEST_CASE("revisions: branches, tags, pull requests, versions and commits; never a way out of refs/") {
  for (const char* good :
       {"main", "v1", "refs/pr/1", "release 1", "feature+x", "0123456789abcdef0123456789abcdef01234567"}) {
    INFO(good);
    CHECK(validate_revision(good));
  }
  for (const std::string& bad :
       {std::string(""), std::string("../main"), std::string("a/../../b"), std::string("/main"), std::string("a\\b"),
        std::string("a//b"), std::string("main/"), std::string("a\nb")}) {
    INFO("revision: " << bad);
    REQUIRE_FALSE(validate_revision(bad));
  }
  CHECK(validate_revision("../main").error().message ==
        "revision `../main` is not allowed: it has a `.` or `..` segment");
}

TEST_CASE("branch and tag names: git's rules, within limits") {
  for (const char* good : {"main", "v1", "refs/pr/1", "release-1.0", "a_b/c.d"}) {
    INFO(good);
    CHECK(validate_ref_name(good));
  }
  for (const std::string& bad :
       {std::string(""), std::string("a..b"), std::string("-x"), std::string("a b"), std::string("x/"),
        std::string("/x"), std::string("x."), std::string("a//b"), std::string("x.lock"), std::string("a.lock/b"),
        std::string(".hidden"), std::string("a/.git/b"), std::string("a/./b"),
        std::string(kMaxRefNameBytes + 1, 'a')}) {
    INFO("name: " << bad);
    CHECK_FALSE(validate_ref_name(bad));
  }
  CHECK(validate_ref_name("a/.git/b").error().message ==
        "revision name `a/.git/b` is not allowed: a segment must not start with `.`");
}

TEST_CASE("every branch or tag name a server creates is a revision a client can ask for") {
  // Random names over the characters that matter to either rule.
  std::mt19937 rng(20261204);
  constexpr std::string_view kAlphabet = "ab0_-./\\ \n.lockgit";
  std::uniform_int_distribution<std::size_t> length(1, 24);
  std::uniform_int_distribution<std::size_t> pick(0, kAlphabet.size() - 1);
  int ref_names = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string name;
    for (std::size_t n = length(rng); n > 0; --n) name.push_back(kAlphabet[pick(rng)]);
    if (!validate_ref_name(name)) continue;
    ++ref_names;
    INFO(name);
    CHECK(validate_revision(name));
  }
  CHECK(ref_names > 100);  // the sample reaches the accepting side
}

}  // namespace
}  // namespace kernelhub::hub_names
