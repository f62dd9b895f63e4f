#include "kernelhub/server/internal/store.hpp"

#include <catch2/catch.hpp>
#include <fstream>

#include "kernelhub/base/internal/sha256.hpp"
#include "temp_dir.hpp"

using namespace kernelhub::server;
using kernelhub::RepoType;
using kernelhub::server::testing::TempDir;

namespace {
RepoKey kernel_key() {
  return *parse_repo_key(RepoType::kKernel, "acme/relu");
}

CommitOperation add(std::string path, std::string sha) {
  return CommitOperation{CommitOperation::Kind::kAddBlob, std::move(path), std::move(sha), false, std::nullopt};
}
}  // namespace

TEST_CASE("a new repo has main with the initial .gitattributes commit", "[server][store]") {
  TempDir dir;
  auto store = Store::open(dir.path(), {});
  REQUIRE(store);
  REQUIRE(*(*store)->create_repo(kernel_key(), {}));
  CHECK_FALSE(*(*store)->create_repo(kernel_key(), {}));  // exists
  auto repo = (*store)->repo(kernel_key());
  REQUIRE(repo);
  const auto head = repo->branches.at("main");
  auto commit = (*store)->commit(kernel_key(), head);
  REQUIRE(commit);
  CHECK((*commit)->files.contains(".gitattributes"));
  CHECK((*store)->resolve(*repo, head.substr(0, 7)) == head);
  CHECK_FALSE((*store)->resolve(*repo, "nope"));
}

TEST_CASE("commits apply adds and deletes and survive a restart", "[server][store]") {
  TempDir dir;
  std::string head;
  {
    auto store = std::move(Store::open(dir.path(), {.lfs_threshold = 8}).value());
    REQUIRE(*store->create_repo(kernel_key(), {}));
    const auto small = *store->put_blob("hello\n");
    const auto big = *store->put_blob("0123456789abcdef");
    CommitRequest request{
        "main", "add", "", std::nullopt, {add("build/a.txt", small), add("build/sub/b.bin", big), add("c.txt", small)}};
    auto outcome = store->apply_commit(kernel_key(), request);
    REQUIRE(outcome);
    REQUIRE(outcome->status == CommitOutcome::Status::kCommitted);
    CommitRequest remove{"main",
                         "rm",
                         "",
                         outcome->commit_id.substr(0, 8),
                         {CommitOperation{CommitOperation::Kind::kDeleteFolder, "build/sub", {}, false, {}}}};
    auto second = store->apply_commit(kernel_key(), remove);
    REQUIRE(second->status == CommitOutcome::Status::kCommitted);
    head = second->commit_id;
    auto first = *store->commit(kernel_key(), outcome->commit_id);
    CHECK(first->files.at("build/a.txt").git_sha1 == "ce013625030ba8dba906f756967f9e9ca394464a");
    CHECK_FALSE(first->files.at("build/a.txt").lfs);
    CHECK(first->files.at("build/sub/b.bin").lfs);  // >= threshold
  }
  auto reopened = std::move(Store::open(dir.path(), {.lfs_threshold = 8}).value());
  auto repo = reopened->repo(kernel_key());
  REQUIRE(repo);
  CHECK(repo->branches.at("main") == head);
  auto commit = *reopened->commit(kernel_key(), head);
  CHECK(commit->files.contains("build/a.txt"));
  CHECK_FALSE(commit->files.contains("build/sub/b.bin"));
}

TEST_CASE("apply_commit refuses without changing the branch", "[server][store]") {
  TempDir dir;
  auto store = std::move(Store::open(dir.path(), {}).value());
  REQUIRE(*store->create_repo(kernel_key(), {}));
  const auto head = store->repo(kernel_key())->branches.at("main");
  using S = CommitOutcome::Status;
  const std::string unknown(64, 'a');
  CHECK(store->apply_commit(kernel_key(), {"main", "x", "", std::nullopt, {add("a", unknown)}})->status ==
        S::kMissingBlob);
  CHECK(store->apply_commit(kernel_key(), {"main", "x", "", std::string("deadbeef"), {}})->status ==
        S::kParentMismatch);
  CHECK(store->apply_commit(kernel_key(), {"dev", "x", "", std::nullopt, {}})->status == S::kBranchNotFound);
  CHECK(store
            ->apply_commit(kernel_key(), {"main",
                                          "x",
                                          "",
                                          std::nullopt,
                                          {CommitOperation{CommitOperation::Kind::kDeleteFile, "nope", {}, false, {}}}})
            ->status == S::kEntryNotFound);
  const auto sha = *store->put_blob("abc");
  auto sized = add("a", sha);
  sized.size = 4;
  CHECK(store->apply_commit(kernel_key(), {"main", "x", "", std::nullopt, {sized}})->status == S::kSizeMismatch);
  CHECK(store->repo(kernel_key())->branches.at("main") == head);
  CHECK(store->apply_commit(*parse_repo_key(RepoType::kKernel, "acme/none"), {"main", "x", "", std::nullopt, {}})
            ->status == S::kRepoNotFound);
}

TEST_CASE("refs can be created once and deleted", "[server][store]") {
  TempDir dir;
  auto store = std::move(Store::open(dir.path(), {}).value());
  REQUIRE(*store->create_repo(kernel_key(), {}));
  const auto head = store->repo(kernel_key())->branches.at("main");
  CHECK(*store->set_ref(kernel_key(), Store::RefKind::kBranch, "v1", head, true) == Store::RefChange::kDone);
  CHECK(*store->set_ref(kernel_key(), Store::RefKind::kBranch, "v1", head, true) == Store::RefChange::kExists);
  CHECK(*store->set_ref(kernel_key(), Store::RefKind::kTag, "v1.0.0", head, true) == Store::RefChange::kDone);
  CHECK(store->resolve(*store->repo(kernel_key()), "v1.0.0") == head);
  CHECK(*store->set_ref(kernel_key(), Store::RefKind::kTag, "v1.0.0", std::nullopt, false) == Store::RefChange::kDone);
  CHECK(*store->set_ref(kernel_key(), Store::RefKind::kTag, "v1.0.0", std::nullopt, false) ==
        Store::RefChange::kNotFound);
  CHECK(*store->delete_repo(kernel_key()));
  CHECK_FALSE(store->repo(kernel_key()));
  CHECK_FALSE(*store->delete_repo(kernel_key()));
}

TEST_CASE("blobs are content addressed and tmp is emptied on open", "[server][store]") {
  TempDir dir;
  {
    auto store = std::move(Store::open(dir.path(), {}).value());
    const auto sha = *store->put_blob("payload");
    CHECK(sha == kernelhub::to_hex(kernelhub::sha256("payload")));
    CHECK(store->blob_size(sha) == 7u);
    CHECK(std::filesystem::exists(dir.path() / "blobs" / sha.substr(0, 2) / sha));
    std::ofstream(dir.path() / "tmp" / "tmp-leftover") << "half";
  }
  auto store = std::move(Store::open(dir.path(), {}).value());
  CHECK(std::filesystem::is_empty(dir.path() / "tmp"));
  CHECK_FALSE(store->blob_size("not-a-sha"));
}

TEST_CASE("full ref names resolve like short ones", "[server][store]") {
  TempDir dir;
  auto store = std::move(Store::open(dir.path(), {}).value());
  REQUIRE(*store->create_repo(kernel_key(), {}));
  const auto head = store->repo(kernel_key())->branches.at("main");
  REQUIRE(*store->set_ref(kernel_key(), Store::RefKind::kTag, "v1.0", head, true) == Store::RefChange::kDone);
  auto repo = store->repo(kernel_key());
  CHECK(store->resolve(*repo, "refs/heads/main") == head);
  CHECK(store->resolve(*repo, "refs/tags/v1.0") == head);
  CHECK_FALSE(store->resolve(*repo, "refs/heads/v1.0"));
}

TEST_CASE("moves, squashes, LFS removal and discussions survive a restart", "[server][store]") {
  TempDir dir;
  const RepoKey moved = *parse_repo_key(RepoType::kKernel, "acme/gelu");
  std::string squashed;
  {
    auto store = std::move(Store::open(dir.path(), {}).value());
    REQUIRE(*store->create_repo(kernel_key(), {}, "alice"));
    CHECK_FALSE(*store->create_repo(*parse_repo_key(RepoType::kKernel, "ACME/Relu"), {}));  // ids ignore case
    const auto lfs_blob = *store->put_blob("weights");
    CommitOperation lfs_op = add("w.bin", lfs_blob);
    lfs_op.lfs = true;
    REQUIRE(store->apply_commit(kernel_key(), {"main", "w", "", std::nullopt, {lfs_op}, "alice"})->status ==
            CommitOutcome::Status::kCommitted);
    REQUIRE(store->apply_commit(kernel_key(), {"main", "a", "", std::nullopt, {add("a.txt", *store->put_blob("a"))}})
                ->status == CommitOutcome::Status::kCommitted);
    REQUIRE(*store->set_ref(kernel_key(), Store::RefKind::kTag, "v1", store->repo(kernel_key())->branches.at("main"),
                            true) == Store::RefChange::kDone);

    // The LFS file leaves every commit of main and of the tag; the other files stay.
    REQUIRE(*store->remove_lfs_objects(kernel_key(), {lfs_blob}) == 2);
    auto repo = store->repo(kernel_key());
    for (const auto& tip : {repo->branches.at("main"), repo->tags.at("v1")}) {
      for (auto c = *store->commit(kernel_key(), tip);; c = *store->commit(kernel_key(), c->parent)) {
        CHECK_FALSE(c->files.contains("w.bin"));
        if (c->parent.empty()) break;
      }
    }
    CHECK((*store->commit(kernel_key(), repo->branches.at("main")))->files.contains("a.txt"));

    auto squash = store->squash_branch(kernel_key(), "main", "squashed", "alice");
    REQUIRE(squash->status == CommitOutcome::Status::kCommitted);
    squashed = squash->commit_id;
    CHECK((*store->commit(kernel_key(), squashed))->parent.empty());
    CHECK((*store->commit(kernel_key(), squashed))->authors == std::vector<std::string>{"alice"});

    Discussion pr{0, "fix", "", "carol", "2026-12-03T00:00:00.000Z", "open", true, "main"};
    CHECK(*store->open_discussion(kernel_key(), pr, squashed) == 1);
    CHECK(*store->open_discussion(kernel_key(), pr, squashed) == 2);
    REQUIRE(*store->move_repo(kernel_key(), moved) == Store::MoveOutcome::kMoved);
    CHECK(*store->move_repo(moved, moved) == Store::MoveOutcome::kMoved);  // a no-op, no redirect to itself
  }
  auto reopened = std::move(Store::open(dir.path(), {}).value());
  CHECK_FALSE(reopened->repo(kernel_key()));
  CHECK(reopened->moved_to(kernel_key()) == moved);
  CHECK_FALSE(reopened->moved_to(moved));
  auto repo = reopened->repo(moved);
  REQUIRE(repo);
  CHECK(repo->branches.at("main") == squashed);
  CHECK(repo->branches.at("refs/pr/2") == squashed);
  REQUIRE(repo->meta.discussions.size() == 2);
  CHECK(repo->meta.discussions[1].author == "carol");
  // Creating a repo under the old id again ends the redirect.
  REQUIRE(*reopened->create_repo(kernel_key(), {}));
  CHECK_FALSE(reopened->moved_to(kernel_key()));
}
