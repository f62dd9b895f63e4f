// Fault injection on loopback: each run ends in success or a typed error, the cache never holds
// a blob whose hash is wrong, and no temp file is left behind.
#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>

#include "kernelhub/client/internal/hub_client.hpp"
#include "support/fake_hub.hpp"
#include "test_support.hpp"

using namespace kernelhub;
using namespace kernelhub::client;
using namespace kernelhub::client::testing;
using namespace kernelhub::testing;
namespace fs = std::filesystem;

namespace {

const RepoId kRepo{"org", "kern"};
const std::string kBig = random_bytes(2'500'000, 7);
const std::string kSmall = random_bytes(300'000, 8);  // a regular (git) file, served by the Hub itself

struct Fixture {
  FakeHub hub;
  TempDir dir;
  fs::path cache = dir.path() / "hub";
  Fixture() {
    hub.add_kernel("org/kern", {{"build/torch-cpu/big.so", kBig, true}, {"build/torch-cpu/small.bin", kSmall, false}});
  }
  int hash_threads = 0;
  std::shared_ptr<Clock> clock = real_clock();
  Result<Snapshot> download(const Faults& faults) {
    hub.set_faults(faults);
    Settings s = test_settings(cache, hub.endpoint());
    s.hash_threads = hash_threads;
    s.clock = clock;
    return HubClient(s).download_variant(kRepo, RepoType::kKernel, "main", "torch-cpu");
  }
  void check_complete(const Result<Snapshot>& snap) {
    REQUIRE(snap);
    CHECK(read_file(snap->path / "big.so") == kBig);
    CHECK(read_file(snap->path / "small.bin") == kSmall);
    CHECK(cache_problems(cache).empty());
  }
  void check_nothing_bad(const Result<Snapshot>& snap, ErrorCode code) {
    REQUIRE_FALSE(snap);
    CHECK(snap.error().code == code);
    CHECK(cache_problems(cache).empty());
  }
};

}  // namespace

TEST_CASE("faults: 500/502/503 bursts are retried") {
  Fixture f;
  Faults faults;
  faults.statuses = {500, 502, 503, 500};
  f.check_complete(f.download(faults));
}

TEST_CASE("faults: 429 with Retry-After is honoured") {
  Fixture f;
  Faults faults;
  faults.statuses = {429};
  faults.retry_after_s = 1;
  auto clock = std::make_shared<ManualClock>();  // the second is waited on the client's clock, not here
  f.clock = clock;
  const auto start = clock->now();
  f.check_complete(f.download(faults));
  CHECK(clock->now() - start >= std::chrono::milliseconds(950));
}

TEST_CASE("faults: a connection reset mid-body resumes with Range") {
  Fixture f;
  Faults faults;
  faults.resets = 3;
  faults.reset_after = 200'000;
  auto snap = f.download(faults);
  f.check_complete(snap);
  // Resumed, not restarted: far fewer bytes than a restart per cut would fetch.
  CHECK(snap->downloaded_bytes == kBig.size() + kSmall.size());
}

// Note [Retry policy] (blob_download.cpp): retries are counted per file whether or not an attempt
// brought bytes, each is said to the progress sink, and what came is kept for the next run.
TEST_CASE("faults: a transfer cut every time ends after the retries docs/CLI.md states, each said") {
  struct Retries final : ProgressSink {
    std::vector<std::string> said;
    void start(const std::string&, std::uint64_t, int) override {}
    void add(std::uint64_t) override {}
    void finish() override {}
    void retry(const std::string& message) override { said.push_back(message); }
  };
  Fixture f;
  f.hub.add_kernel("org/big", {{"build/torch-cpu/big.so", kBig, true}});
  Faults faults;
  faults.resets = 1000;  // every GET: each brings 100 kB of 2.5 MB, then the connection is cut
  faults.reset_after = 100'000;
  f.hub.set_faults(faults);
  Settings s = test_settings(f.cache, f.hub.endpoint());
  Retries retries;
  DownloadOptions options;
  options.progress = &retries;
  const RepoId big{"org", "big"};
  auto snap = HubClient(s).download_variant(big, RepoType::kKernel, "main", "torch-cpu", options);
  REQUIRE_FALSE(snap);
  CHECK(snap.error().code == ErrorCode::kNetwork);
  CHECK_THAT(snap.error().message, Catch::Contains("after 6 attempts") && Catch::Contains("the last of 5 retries") &&
                                       Catch::Contains("600000 of 2500000 bytes received are kept"));
  REQUIRE(retries.said.size() == 5);
  CHECK_THAT(retries.said[0], Catch::StartsWith("retrying `build/torch-cpu/big.so` in 0.0 s (retry 1 of 5): "));
  CHECK_THAT(retries.said[4], Catch::Contains("(retry 5 of 5)"));
  CHECK(cache_problems(f.cache).empty());
  CHECK(partial_files(f.cache).size() == 1);

  // The next run continues from the bytes kept.
  f.hub.set_faults(Faults{});
  auto again = HubClient(s).download_variant(big, RepoType::kKernel, "main", "torch-cpu");
  REQUIRE(again);
  CHECK(again->resumed_bytes == 600'000);
  CHECK(read_file(again->path / "big.so") == kBig);
}

TEST_CASE("faults: a response slower than the read timeout is retried") {
  Fixture f;
  Faults faults;
  faults.slow = 1;
  faults.slow_ms = 2500;
  f.check_complete(f.download(faults));
}

TEST_CASE("faults: a flipped byte is caught and fetched again") {
  for (int threads : {0, 2}) {
    Fixture f;
    f.hash_threads = threads;  // inline hashing, and the hashing threads
    Faults faults;
    faults.flips = 1;
    f.check_complete(f.download(faults));
  }
}

TEST_CASE("faults: resets and flips with hashing threads") {
  Fixture f;
  f.hash_threads = 2;
  Faults faults;
  faults.resets = 2;
  faults.reset_after = 150'000;
  faults.flips = 1;
  f.check_complete(f.download(faults));
}

TEST_CASE("faults: bytes that never verify end in kIntegrityMismatch, nothing stored") {
  Fixture f;
  Faults faults;
  faults.flips = 1000;
  auto snap = f.download(faults);
  f.check_nothing_bad(snap, ErrorCode::kIntegrityMismatch);
  CHECK(snap.error().message.find("failed verification 3 times") != std::string::npos);
  CHECK(snap.error().message.find("build/torch-cpu/") != std::string::npos);
  CHECK_FALSE(fs::exists(f.cache / "kernels--org--kern/blobs" / sha256_hex(kBig)));
}

TEST_CASE("faults: a short body with a long Content-Length ends in kNetwork") {
  Fixture f;
  Faults faults;
  faults.short_body_always = true;
  auto snap = f.download(faults);
  f.check_nothing_bad(snap, ErrorCode::kNetwork);
  CHECK(snap.error().message.find("kernel repo `org/kern` at revision `main`") != std::string::npos);
}

TEST_CASE("faults: the temp file a crashed writer left is continued, and gone once the blob is whole") {
  Fixture f;
  const fs::path blobs = f.cache / "kernels--org--kern/blobs";
  fs::create_directories(blobs);
  const fs::path stale = blobs / (sha256_hex(kBig) + ".0badf00d.incomplete");
  { std::ofstream(stale, std::ios::binary) << kBig.substr(0, 700'000); }
  auto snap = f.download(Faults{});
  f.check_complete(snap);
  CHECK(snap->resumed_bytes == 700'000);
  CHECK_FALSE(fs::exists(stale));
  CHECK(partial_files(f.cache).empty());
}

TEST_CASE("faults: a 503 that never ends gives kNetwork after the retries") {
  Fixture f;
  Faults faults;
  faults.statuses = std::vector<int>(100, 503);
  auto snap = f.download(faults);
  f.check_nothing_bad(snap, ErrorCode::kNetwork);
  CHECK(snap.error().message.find("attempts: HTTP 503") != std::string::npos);
}

TEST_CASE("faults: a redirect loop is cut") {
  Fixture f;
  Faults faults;
  faults.redirect_loop = true;
  auto snap = f.download(faults);
  f.check_nothing_bad(snap, ErrorCode::kNetwork);
  CHECK(snap.error().message.find("too many redirects") != std::string::npos);
  HubClient client(test_settings(f.cache, f.hub.endpoint()));
  auto head = client.file_metadata(kRepo, RepoType::kKernel, "main", "build/torch-cpu/small.bin");
  REQUIRE_FALSE(head);
  CHECK(head.error().message.find("too many redirects") != std::string::npos);
}

TEST_CASE("faults: the storage host never sees the token") {
  Fixture f;
  Faults faults;
  faults.cross_host_regular = true;
  f.check_complete(f.download(faults));
  int storage = 0;
  for (const auto& r : f.hub.requests()) {
    if (r.host != "storage") continue;
    ++storage;
    CHECK(r.authorization.empty());
  }
  CHECK(storage == 2);
}

TEST_CASE("faults: an unreachable Hub is kNetwork naming the repo, after one attempt") {
  TempDir dir;
  Settings s = test_settings(dir.path(), "http://127.0.0.1:9");
  auto snap = HubClient(s).download_variant(kRepo, RepoType::kKernel, "main", "torch-cpu");
  REQUIRE_FALSE(snap);
  CHECK(snap.error().code == ErrorCode::kNetwork);
  CHECK(snap.error().message.starts_with(
      "the Hub at `http://127.0.0.1:9` (HF_ENDPOINT) could not be reached, for kernel repo `org/kern` at revision "
      "`main`"));
  CHECK(snap.error().message.find("1 attempt over") != std::string::npos);
}

TEST_CASE("faults: API answers that redirect (same host, or through the storage host) are followed") {
  Fixture f;
  Faults faults;
  faults.api_hops = 3;  // the revision, then both tree pages: each a 307 to /__hop, which 307s back
  f.check_complete(f.download(faults));
  CHECK(f.hub.count("hub", "GET") >= 6);

  Fixture cross;
  faults.api_hops_via_storage = true;
  cross.check_complete(cross.download(faults));
  int hops = 0;
  for (const auto& r : cross.hub.requests()) {
    if (r.host != "storage") continue;
    CHECK(r.authorization.empty());  // the hop on the other host never gets the token
    hops += r.path == "/__hop";
  }
  CHECK(hops == 3);
}

TEST_CASE("faults: an API redirect loop is cut with a typed error") {
  Fixture f;
  Faults faults;
  faults.api_hops = 1000;
  auto snap = f.download(faults);
  f.check_nothing_bad(snap, ErrorCode::kNetwork);
  CHECK(snap.error().message.find("too many redirects") != std::string::npos);
}
