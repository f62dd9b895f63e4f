#include "kernelhub/client/internal/cache_layout.hpp"

#include <unistd.h>

#include <fstream>

#include <catch2/catch.hpp>

#include "kernelhub/base/internal/git_blob_sha1.hpp"
#include "test_support.hpp"

using namespace kernelhub;
using namespace kernelhub::client;

TEST_CASE("CacheLayout: folder names round-trip") {
  const RepoId repo{"kernels-community", "activation"};
  CHECK(CacheLayout::repo_folder_name(RepoType::kKernel, repo) == "kernels--kernels-community--activation");
  CHECK(CacheLayout::repo_folder_name(RepoType::kModel, repo) == "models--kernels-community--activation");
  auto parsed = CacheLayout::parse_repo_folder("kernels--kernels-community--activation");
  REQUIRE(parsed);
  CHECK(parsed->type == RepoType::kKernel);
  CHECK(parsed->repo == repo);
  CHECK_FALSE(CacheLayout::parse_repo_folder("snapshots"));
}

TEST_CASE("RepoId: the Hub's repo id rules, and an org") {
  const auto repo = RepoId::parse("acme.git/rms-norm");  // huggingface_hub takes a namespace ending in .git
  REQUIRE(repo);
  CHECK(repo->org == "acme.git");
  CHECK(repo->name == "rms-norm");
  const std::string part96(96, 'a');
  CHECK(RepoId::parse(part96 + "/" + part96));  // 96 characters a part, not for the whole id
  CHECK(RepoId::parse("gpt2").error().message ==
        "`gpt2` is not a valid repo id: it has no `/`; a kernel lives under an org (expected org/name, e.g. "
        "kernels-community/activation)");
  CHECK(RepoId::parse("a/b.git").error().message ==
        "`a/b.git` is not a valid repo id: it must not end with `.git` (expected org/name, e.g. "
        "kernels-community/activation)");
  for (const char* bad : {"a/b/c", "a--b/c", "../x", "a/..", "", "/b"}) {
    INFO(bad);
    CHECK(RepoId::parse(bad).error().code == ErrorCode::kInvalidArgument);
  }
}

TEST_CASE("CacheLayout: paths are huggingface_hub's") {
  const CacheLayout layout("/c", RepoType::kKernel, RepoId{"org", "kern"});
  const std::string commit(40, 'a');
  CHECK(layout.blob_path("abc") == "/c/kernels--org--kern/blobs/abc");
  CHECK(layout.snapshot_path(commit, "build/x/y.so") == "/c/kernels--org--kern/snapshots/" + commit + "/build/x/y.so");
  CHECK(layout.ref_path("refs/pr/1") == "/c/kernels--org--kern/refs/refs/pr/1");
  CHECK(layout.no_exist_path(commit, "a.json") == "/c/kernels--org--kern/.no_exist/" + commit + "/a.json");
  CHECK(layout.tree_path(commit) == "/c/kernels--org--kern/trees/" + commit + ".json");
  CHECK(layout.lock_path("e") == "/c/.locks/kernels--org--kern/e.lock");
  const std::string temp = layout.incomplete_path("e").filename().string();
  CHECK(temp.size() == std::string("e.12345678.incomplete").size());
  CHECK(temp.ends_with(".incomplete"));
  CHECK(CacheLayout::blob_link_target("a", "e") == "../../blobs/e");
  CHECK(CacheLayout::blob_link_target("build/torch-cpu/x", "e") == "../../../../blobs/e");
}

TEST_CASE("CacheLayout: the repo folder of a path inside a snapshot, none outside one") {
  const CacheLayout layout("/c", RepoType::kKernel, RepoId{"org", "kern"});
  const std::string commit(40, 'a');
  CHECK(CacheLayout::repo_dir_of_snapshot_path(layout.snapshot_dir(commit)) == layout.repo_dir());
  CHECK(CacheLayout::repo_dir_of_snapshot_path(layout.snapshot_path(commit, "build/x")) == layout.repo_dir());
  CHECK(CacheLayout::repo_dir_of_snapshot_path(layout.snapshot_dir(commit) / ".." / commit / "build") ==
        layout.repo_dir());
  CHECK(CacheLayout::blobs_dir_of(*CacheLayout::repo_dir_of_snapshot_path(layout.snapshot_path(commit, "x"))) ==
        layout.blobs_dir());
  CHECK_FALSE(CacheLayout::repo_dir_of_snapshot_path(layout.snapshots_dir()));
  CHECK_FALSE(CacheLayout::repo_dir_of_snapshot_path(layout.blob_path("e")));
  CHECK_FALSE(CacheLayout::repo_dir_of_snapshot_path("/work/build/torch-cpu"));
}

TEST_CASE("CacheLayout: a ref the kernels package wrote reads back; one that is not a commit is a typed error") {
  client::testing::TempDir dir;
  const CacheLayout layout(dir.path(), RepoType::kKernel, RepoId{"org", "kern"});
  const std::string commit = git_blob_sha1("x");
  std::filesystem::create_directories(layout.ref_path("v1").parent_path());
  // Surrounding whitespace is ignored, as the kernels package's read_text().strip() ignores it.
  { std::ofstream(layout.ref_path("v1")) << commit << "\n"; }
  CHECK(layout.read_ref("v1").value() == commit);
  // The kernels package's temporary file from tempfile.mkstemp, left by a crash, is not a ref.
  { std::ofstream(layout.ref_path(".v1.k3j_x9a")) << commit.substr(0, 10); }
  CHECK(layout.list_refs() == std::vector<std::string>{"v1"});

  for (const std::string& bad : {std::string("garbage"), commit.substr(0, 39), commit + "0", std::string(),
                                 std::string(4096, 'a'), std::string("\x01\x02") + commit}) {
    { std::ofstream(layout.ref_path("v2"), std::ios::binary | std::ios::trunc) << bad; }
    const auto read = layout.read_ref("v2");
    REQUIRE_FALSE(read.has_value());
    CHECK(read.error().code == ErrorCode::kCorruptFile);
    CHECK_THAT(read.error().message, Catch::Contains(layout.ref_path("v2").string()) && Catch::Contains("org/kern") &&
                                         Catch::Contains("delete it"));
    CHECK(read.error().message.size() < 400);
    CHECK(client::testing::read_file(layout.ref_path("v2")) == bad);  // left as it was
  }
  // Writing the commit the Hub names replaces it.
  REQUIRE(layout.write_ref("v2", commit));
  CHECK(layout.read_ref("v2").value() == commit);
}

TEST_CASE("CacheLayout: refs without newline, relative links, CACHEDIR.TAG") {
  client::testing::TempDir dir;
  const CacheLayout layout(dir.path(), RepoType::kKernel, RepoId{"org", "kern"});
  const std::string commit = git_blob_sha1("x");
  REQUIRE(layout.write_ref("main", commit));
  CHECK(client::testing::read_file(layout.ref_path("main")) == commit);
  CHECK(layout.read_ref("main").value() == commit);
  CHECK_FALSE(layout.read_ref("nope").value());
  REQUIRE(layout.write_ref("refs/pr/1", commit));
  CHECK(layout.list_refs() == std::vector<std::string>{"main", "refs/pr/1"});

  std::filesystem::create_directories(layout.blobs_dir());
  { std::ofstream(layout.blob_path("e")) << "hello"; }
  REQUIRE(layout.link_snapshot(commit, "build/v/f.txt", "e"));
  REQUIRE(layout.link_snapshot(commit, "build/v/f.txt", "e"));  // idempotent
  CHECK(std::filesystem::read_symlink(layout.snapshot_path(commit, "build/v/f.txt")) == "../../../../blobs/e");
  CHECK(client::testing::read_file(layout.snapshot_path(commit, "build/v/f.txt")) == "hello");
  CHECK(layout.list_snapshots() == std::vector<std::string>{commit});

  layout.ensure_cachedir_tag();
  CHECK(client::testing::read_file(dir.path() / "CACHEDIR.TAG")
            .starts_with("Signature: 8a477f597d28d172789f06886806bc55\n"));
  CHECK(client::testing::cache_problems(dir.path()).find("temp file") == std::string::npos);
}
