#include "kernelhub/client/internal/hub_client.hpp"

#include <catch2/catch.hpp>

#include "kernelhub/client/internal/cache_layout.hpp"
#include "support/fake_hub.hpp"
#include "test_support.hpp"

using namespace kernelhub;
using namespace kernelhub::client;
using namespace kernelhub::client::testing;
using namespace kernelhub::testing;
namespace fs = std::filesystem;

namespace {

const RepoId kRepo{"org", "kern"};

std::vector<FakeFile> kernel_files() {
  return {
      {"README.md", "# kern\n", false},
      {"build/torch-cpu/__init__.py", "from ._ops import ops\n", false},
      {"build/torch-cpu/_ops.py", "ops = 1\n", false},
      {"build/torch-cpu/_kern.abi3.so", random_bytes(3'000'000, 1), true},
      {"build/torch-cuda/__init__.py", "cuda = True\n", false},
      {"build/torch-cuda/_kern.abi3.so", random_bytes(1'000'000, 2), true},
      {"build/torch-cpu/metadata.json", "{\"version\": 1}", false},
  };
}

struct Fixture {
  FakeHub hub;
  TempDir dir;
  fs::path cache = dir.path() / "hub";
  Fixture() { hub.add_kernel("org/kern", kernel_files()); }
  HubClient client(bool offline = false) const {
    Settings s = test_settings(cache, hub.endpoint());
    s.offline = offline;
    return HubClient(s);
  }
};

}  // namespace

TEST_CASE("download_variant: cold download lays out the huggingface_hub cache") {
  Fixture f;
  const auto client = f.client();
  auto snap = client.download_variant(kRepo, RepoType::kKernel, "main", "torch-cpu");
  REQUIRE(snap);
  const std::string commit = f.hub.commit("org/kern");
  CHECK(snap->commit == commit);
  CHECK(snap->files == std::vector<std::string>{"build/torch-cpu/__init__.py", "build/torch-cpu/_kern.abi3.so",
                                                "build/torch-cpu/_ops.py", "build/torch-cpu/metadata.json"});
  CHECK(snap->bytes == 3'000'000 + 22 + 8 + 14);
  CHECK(snap->downloaded_bytes == snap->bytes);
  CHECK(snap->path == f.cache / "kernels--org--kern" / "snapshots" / commit / "build" / "torch-cpu");
  // revision + 4 tree pages (7 files, 2 per page) + 3 regular GETs + LFS 302 + storage GET
  CHECK(snap->requests == 1 + 4 + 3 + 2);
  CHECK(read_file(f.cache / "kernels--org--kern/refs/main") == commit);
  CHECK(fs::exists(f.cache / "kernels--org--kern/trees" / (commit + ".json")));
  CHECK(fs::exists(f.cache / "CACHEDIR.TAG"));
  const fs::path so = snap->path / "_kern.abi3.so";
  CHECK(fs::read_symlink(so) == "../../../../blobs/" + sha256_hex(random_bytes(3'000'000, 1)));
  CHECK(read_file(so) == random_bytes(3'000'000, 1));
  CHECK(fs::exists(f.cache / ".locks/kernels--org--kern" / (sha256_hex(random_bytes(3'000'000, 1)) + ".lock")));
  CHECK(cache_problems(f.cache).empty());
  // The token went to the Hub, never to the storage host.
  for (const auto& r : f.hub.requests()) {
    if (r.host == "storage") CHECK(r.authorization.empty());
    if (r.host == "hub") CHECK(r.authorization == "Bearer hf_testtoken0123456789");
  }
  CHECK(f.hub.count("storage") == 1);
}

// A sink that keeps what it was told (the Python package's progress bars are one).
struct RecordingSink final : ProgressSink {
  std::vector<std::string> events;
  std::uint64_t total = 0;
  std::uint64_t added = 0;
  void start(const std::string& label, std::uint64_t total_bytes, int files) override {
    events.push_back("start " + label + " " + std::to_string(files));
    total = total_bytes;
  }
  void add(std::uint64_t bytes) override { added += bytes; }
  void finish() override { events.push_back("finish"); }
};

TEST_CASE("download_variant: progress goes to the caller's sink, every byte once; nothing when cached") {
  Fixture f;
  const auto client = f.client();
  RecordingSink sink;
  DownloadOptions options;
  options.progress = &sink;
  auto snap = client.download_variant(kRepo, RepoType::kKernel, "main", "torch-cpu", options);
  REQUIRE(snap);
  CHECK(sink.events == std::vector<std::string>{"start org/kern torch-cpu 4", "finish"});
  CHECK(sink.total == snap->bytes);
  CHECK(sink.added == snap->downloaded_bytes);

  RecordingSink cached;
  options.progress = &cached;
  REQUIRE(client.download_variant(kRepo, RepoType::kKernel, "main", "torch-cpu", options));
  CHECK(cached.events.empty());
  CHECK(cached.added == 0);
}

// How fast a warm call is belongs to bench/client (get_kernel_bench), not to a timed assertion here.
TEST_CASE("download_variant: a warm pinned call makes no request, call after call") {
  Fixture f;
  const auto client = f.client();
  REQUIRE(client.download_variant(kRepo, RepoType::kKernel, "v1", "torch-cpu"));
  f.hub.clear_requests();
  const std::string commit = f.hub.commit("org/kern");
  constexpr int kCalls = 200;
  for (int i = 0; i < kCalls; ++i) {
    auto snap = client.download_variant(kRepo, RepoType::kKernel, commit, "torch-cpu");
    REQUIRE(snap);
    REQUIRE(snap->requests == 0);
  }
  CHECK(f.hub.requests().empty());
  // Another variant at the same commit reuses the cached tree: only its files are fetched.
  auto cuda = client.download_variant(kRepo, RepoType::kKernel, commit, "torch-cuda");
  REQUIRE(cuda);
  CHECK(cuda->requests == 1 + 2);
}

TEST_CASE("resolve_revision: branch, tag, version branch, short and full commit") {
  Fixture f;
  const auto client = f.client();
  const std::string commit = f.hub.commit("org/kern");
  for (const char* rev : {"main", "t1", "v2"})
    CHECK(client.resolve_revision(kRepo, RepoType::kKernel, rev).value() == commit);
  CHECK(client.resolve_revision(kRepo, RepoType::kKernel, commit.substr(0, 7)).value() == commit);
  f.hub.clear_requests();
  CHECK(client.resolve_revision(kRepo, RepoType::kKernel, commit).value() == commit);
  CHECK(f.hub.requests().empty());

  auto missing = client.resolve_revision(kRepo, RepoType::kKernel, "v9");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == ErrorCode::kNotFound);
  CHECK(missing.error().message.starts_with(
      "revision `v9` not found in kernel repo `org/kern` (HTTP 404 RevisionNotFound"));
  CHECK(missing.error().missing == Missing::kRevision);
  auto no_repo = client.resolve_revision(RepoId{"org", "nope"}, RepoType::kKernel, "main");
  REQUIRE_FALSE(no_repo);
  CHECK(no_repo.error().code == ErrorCode::kNotFound);
  CHECK(no_repo.error().message.starts_with("kernel repo `org/nope` not found"));
  CHECK(no_repo.error().missing == Missing::kRepo);
  // Context added on the way up keeps what was missing.
  CHECK(no_repo.error().with_context("resolving").missing == Missing::kRepo);
  CHECK(client.resolve_revision(kRepo, RepoType::kKernel, "../x").error().code == ErrorCode::kInvalidArgument);
}

TEST_CASE("list_versions and list_variants") {
  Fixture f;
  const auto client = f.client();
  CHECK(client.list_versions(kRepo).value() == std::vector<std::string>{"v1", "v2"});
  const std::string commit = f.hub.commit("org/kern");
  CHECK(client.list_variants(kRepo, RepoType::kKernel, commit).value() ==
        std::vector<std::string>{"torch-cpu", "torch-cuda"});
  // Offline, the versions come from refs/.
  CHECK(f.client(true).list_versions(kRepo).value() == std::vector<std::string>{"v1", "v2"});

  auto missing = client.download_variant(kRepo, RepoType::kKernel, "main", "torch-rocm");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == ErrorCode::kNotFound);
  CHECK(missing.error().message ==
        "variant `torch-rocm` not found in kernel repo `org/kern` at revision `main` (commit `" + commit +
            "`); it has `torch-cpu`, `torch-cuda`");
  CHECK(client.download_variant(kRepo, RepoType::kKernel, "main", "../x").error().code == ErrorCode::kInvalidArgument);
  // Given the resolved commit, messages still name the revision the user asked for.
  DownloadOptions options;
  options.asked_revision = "v1";
  auto pinned = client.download_variant(kRepo, RepoType::kKernel, commit, "torch-rocm", options);
  REQUIRE_FALSE(pinned);
  CHECK(pinned.error().message ==
        "variant `torch-rocm` not found in kernel repo `org/kern` at revision `v1` (commit `" + commit +
            "`); it has `torch-cpu`, `torch-cuda`");
}

TEST_CASE("offline: answers from refs/ and snapshots/ with no request; a miss lists the cache") {
  Fixture f;
  const auto offline = f.client(true);
  auto miss = offline.download_variant(kRepo, RepoType::kKernel, "main", "torch-cpu");
  REQUIRE_FALSE(miss);
  CHECK(miss.error().code == ErrorCode::kOfflineMiss);
  CHECK(miss.error().message.find("holds nothing for this repo") != std::string::npos);

  REQUIRE(f.client().download_variant(kRepo, RepoType::kKernel, "main", "torch-cpu"));
  f.hub.clear_requests();
  auto hit = offline.download_variant(kRepo, RepoType::kKernel, "main", "torch-cpu");
  REQUIRE(hit);
  CHECK(hit->requests == 0);
  auto other = offline.download_variant(kRepo, RepoType::kKernel, "main", "torch-cuda");
  REQUIRE_FALSE(other);
  CHECK(other.error().code == ErrorCode::kOfflineMiss);
  auto branch = offline.resolve_revision(kRepo, RepoType::kKernel, "v7");
  REQUIRE_FALSE(branch);
  CHECK(branch.error().message.find("holds refs `main` and snapshots `" + f.hub.commit("org/kern") + "`") !=
        std::string::npos);
  // Without trees/ (a cache huggingface_hub filled file by file), the snapshot itself is listed.
  fs::remove_all(f.cache / "kernels--org--kern/trees");
  auto rebuilt = offline.download_variant(kRepo, RepoType::kKernel, "main", "torch-cpu");
  INFO((rebuilt ? "" : rebuilt.error().message));
  REQUIRE(rebuilt);
  CHECK(rebuilt->files.size() == 4);
  CHECK(f.hub.requests().empty());
}

TEST_CASE("download_file: HEAD metadata, LFS redirect, .no_exist marker") {
  Fixture f;
  const auto client = f.client();
  auto meta = client.file_metadata(kRepo, RepoType::kKernel, "main", "build/torch-cpu/_kern.abi3.so");
  REQUIRE(meta);
  CHECK(meta->etag == sha256_hex(random_bytes(3'000'000, 1)));
  CHECK(meta->size == 3'000'000);
  CHECK(meta->location.starts_with("http://" + f.hub.storage_host() + "/blob/"));
  auto regular = client.file_metadata(kRepo, RepoType::kKernel, "main", "README.md");
  REQUIRE(regular);
  CHECK(regular->size == 7);

  auto file = client.download_file(kRepo, RepoType::kKernel, "main", "build/torch-cuda/_kern.abi3.so");
  REQUIRE(file);
  CHECK(read_file(file->path) == random_bytes(1'000'000, 2));
  auto readme = client.download_file(kRepo, RepoType::kKernel, "main", "README.md");
  REQUIRE(readme);
  CHECK(read_file(readme->path) == "# kern\n");
  f.hub.clear_requests();
  CHECK(client.download_file(kRepo, RepoType::kKernel, f.hub.commit("org/kern"), "README.md")->requests == 0);

  auto missing = client.download_file(kRepo, RepoType::kKernel, "main", "kernel-status.toml");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == ErrorCode::kNotFound);
  CHECK(missing.error().message.starts_with(
      "file `kernel-status.toml` in kernel repo `org/kern` at revision `main` not found (HTTP 404 EntryNotFound"));
  CHECK(missing.error().missing == Missing::kFile);
  CHECK(fs::exists(f.cache / "kernels--org--kern/.no_exist" / f.hub.commit("org/kern") / "kernel-status.toml"));
  CHECK(cache_problems(f.cache).empty());
}

TEST_CASE("gated repo: a typed error naming the repo") {
  Fixture f;
  f.hub.require_token("hf_other");
  auto gated = f.client().download_file(kRepo, RepoType::kKernel, "main", "README.md");
  REQUIRE_FALSE(gated);
  CHECK(gated.error().code == ErrorCode::kGated);
  CHECK(gated.error().message.starts_with("kernel repo `org/kern` is gated"));
}
