// When things go wrong around the cache: a Hub that is not there, one that accepts and never
// answers, a download cut short and continued later, and a cached file that changed on disk.
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>

#include "kernelhub/base/internal/git_blob_sha1.hpp"
#include "kernelhub/base/internal/sha256.hpp"
#include "kernelhub/client/internal/cache_layout.hpp"
#include "kernelhub/client/internal/cached_blob.hpp"
#include "kernelhub/client/internal/hub_client.hpp"
#include "support/counting_transport.hpp"
#include "support/fake_hub.hpp"
#include "test_support.hpp"

using namespace kernelhub;
using namespace kernelhub::client;
using namespace kernelhub::client::testing;
using namespace kernelhub::testing;
namespace fs = std::filesystem;

namespace {

const RepoId kRepo{"org", "kern"};
const std::string kBig = random_bytes(2'500'000, 11);  // LFS, through the storage host
const std::string kSmall = random_bytes(20'000, 12);   // a regular (git) file

// A port nothing listens on (bound, then closed).
std::string refused_endpoint() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t length = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length);
  ::close(fd);
  return "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
}

struct Fixture {
  FakeHub hub;
  TempDir dir;
  fs::path cache = dir.path() / "hub";
  Fixture() {
    hub.add_kernel("org/kern", {{"build/torch-cpu/big.so", kBig, true}, {"build/torch-cpu/small.bin", kSmall, false}});
  }
  Settings settings(const std::string& endpoint) const {
    Settings s = test_settings(cache, endpoint);
    s.hash_threads = 0;
    s.transfer_threads = 1;
    return s;
  }
  void warm() {
    auto snap = HubClient(settings(hub.endpoint())).download_variant(kRepo, RepoType::kKernel, "main", "torch-cpu");
    REQUIRE(snap);
  }
  fs::path blobs() const { return cache / "kernels--org--kern/blobs"; }
};

}  // namespace

TEST_CASE("a refused connection is not retried, and a warm cache answers at once, said as a fallback") {
  Fixture f;
  f.warm();
  auto transport = std::make_shared<CountingTransport>();
  const HubClient client(f.settings(refused_endpoint()), transport);
  auto snap = client.download_variant(kRepo, RepoType::kKernel, "main", "torch-cpu");
  REQUIRE(snap);
  CHECK(snap->commit == f.hub.commit("org/kern"));
  CHECK(transport->count() == 1);  // the revision, once: no retry
  CHECK(client.requests() == 1);
  const auto notes = client.fallbacks();
  REQUIRE(notes.size() == 1);
  CHECK_THAT(notes[0], Catch::Contains("could not be reached") && Catch::Contains("cached commit " + snap->commit) &&
                           Catch::Contains("revision `main`"));
  // The client gave up on that host: the next call does not ask it again.
  auto commit = client.resolve_revision(kRepo, RepoType::kKernel, "main");
  REQUIRE(commit);
  CHECK(*commit == snap->commit);
  CHECK(transport->count() == 1);
}

TEST_CASE("a refused connection with nothing cached says what was tried and what to do") {
  TempDir dir;
  auto transport = std::make_shared<CountingTransport>();
  Settings s = test_settings(dir.path() / "hub", refused_endpoint());
  const HubClient client(s, transport);
  auto commit = client.resolve_revision(kRepo, RepoType::kKernel, "v1");
  REQUIRE_FALSE(commit);
  CHECK(commit.error().code == ErrorCode::kNetwork);
  CHECK(commit.error().network == NetworkFailure::kUnreachable);
  CHECK(transport->count() == 1);
  const std::string& message = commit.error().message;
  CHECK_THAT(message, Catch::Contains("(HF_ENDPOINT) could not be reached") && Catch::Contains("1 attempt over") &&
                          Catch::Contains("revision `v1`") && Catch::Contains("HF_HUB_OFFLINE=1") &&
                          Catch::Contains("KERNELHUB_CONNECT_TIMEOUT=1") && Catch::Contains("HF_HUB_ETAG_TIMEOUT=1") &&
                          Catch::Contains("HF_HUB_DOWNLOAD_TIMEOUT=1") &&
                          Catch::Contains("holds nothing for this repo"));
}

TEST_CASE("a server that accepts and never answers is given up on after one read timeout, once") {
  Fixture f;
  f.warm();
  Faults silent;
  silent.silent = true;
  f.hub.set_faults(silent);
  auto transport = std::make_shared<CountingTransport>();
  const HubClient client(f.settings(f.hub.endpoint()), transport);
  auto snap = client.download_variant(kRepo, RepoType::kKernel, "main", "torch-cpu");
  REQUIRE(snap);  // from the cache
  CHECK(transport->count() == 1);
  REQUIRE(client.fallbacks().size() == 1);
  CHECK_THAT(client.fallbacks()[0], Catch::Contains("did not answer"));
  // Without the cache: the error says the host accepted and sent nothing.
  TempDir empty;
  auto cold_transport = std::make_shared<CountingTransport>();
  const HubClient cold(test_settings(empty.path() / "hub", f.hub.endpoint()), cold_transport);
  auto missing = cold.download_variant(kRepo, RepoType::kKernel, "v1", "torch-cpu");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().network == NetworkFailure::kNoAnswer);
  CHECK_THAT(missing.error().message, Catch::Contains("accepted the request and sent no answer"));
  CHECK(cold_transport->count() == 1);
}

TEST_CASE("a Hub that answers 503 is still retried") {
  Fixture f;
  Faults faults;
  faults.statuses = {503, 503};
  f.hub.set_faults(faults);
  auto snap = HubClient(f.settings(f.hub.endpoint())).download_variant(kRepo, RepoType::kKernel, "main", "torch-cpu");
  REQUIRE(snap);
  CHECK(snap->downloaded_bytes == kBig.size() + kSmall.size());
}

TEST_CASE("a download cut short is kept, and the next one continues it with Range") {
  Fixture f;
  Settings s = f.settings(f.hub.endpoint());
  s.max_retries = 2;
  Faults cut;
  cut.short_body_always = true;  // every file GET stops at the middle of the file, whatever the range
  f.hub.set_faults(cut);
  auto failed = HubClient(s).download_variant(kRepo, RepoType::kKernel, "main", "torch-cpu");
  REQUIRE_FALSE(failed);
  CHECK(failed.error().code == ErrorCode::kNetwork);
  const fs::path partial = f.blobs() / (sha256_hex(kBig) + ".incomplete");
  REQUIRE(fs::exists(partial));
  const auto kept = fs::file_size(partial);
  CHECK(kept == kBig.size() / 2);
  CHECK(kBig.compare(0, kept, read_file(partial)) == 0);  // a true prefix
  CHECK(partial_files(f.cache).size() == 2);              // the small file's half too
  CHECK(cache_problems(f.cache).empty());

  f.hub.set_faults(Faults{});
  f.hub.clear_requests();
  auto snap = HubClient(s).download_variant(kRepo, RepoType::kKernel, "main", "torch-cpu");
  REQUIRE(snap);
  CHECK(read_file(snap->path / "big.so") == kBig);
  CHECK(read_file(snap->path / "small.bin") == kSmall);
  CHECK(snap->resumed_bytes == kBig.size() / 2 + kSmall.size() / 2);
  CHECK(snap->downloaded_bytes == kBig.size() + kSmall.size() - snap->resumed_bytes);
  bool ranged = false;
  for (const auto& r : f.hub.requests()) {
    ranged = ranged || (r.host == "storage" && r.range == "bytes=" + std::to_string(kept) + "-");
  }
  CHECK(ranged);
  CHECK(partial_files(f.cache).empty());
  CHECK(cache_problems(f.cache).empty());
}

TEST_CASE("a partial file that was wrong is caught by the blob's hash and fetched again whole") {
  Fixture f;
  fs::create_directories(f.blobs());
  std::string wrong = kBig.substr(0, 500'000);
  wrong[1000] ^= 0x01;
  std::ofstream(f.blobs() / (sha256_hex(kBig) + ".incomplete"), std::ios::binary) << wrong;
  // A dead writer's own temp file too: the longer partial wins, the other goes.
  std::ofstream(f.blobs() / (sha256_hex(kBig) + ".0badf00d.incomplete"), std::ios::binary) << kBig.substr(0, 1000);
  auto snap = HubClient(f.settings(f.hub.endpoint())).download_variant(kRepo, RepoType::kKernel, "main", "torch-cpu");
  REQUIRE(snap);
  CHECK(read_file(snap->path / "big.so") == kBig);
  CHECK(snap->resumed_bytes == 500'000);
  CHECK(cache_problems(f.cache).empty());
  CHECK(partial_files(f.cache).empty());
}

TEST_CASE("a cached file that changed on disk is found and downloaded again; force downloads everything") {
  Fixture f;
  f.warm();
  const fs::path blob = f.blobs() / sha256_hex(kBig);
  {
    std::fstream flip(blob, std::ios::in | std::ios::out | std::ios::binary);
    flip.seekp(123456);
    flip.put(static_cast<char>(kBig[123456] ^ 0x20));
  }
  const HubClient client(f.settings(f.hub.endpoint()));
  // Without verify_cached, a warm download trusts the cache (one stat per file).
  auto trusting = client.download_variant(kRepo, RepoType::kKernel, "main", "torch-cpu");
  REQUIRE(trusting);
  CHECK(trusting->repaired.empty());

  DownloadOptions verify;
  verify.verify_cached = true;
  auto repaired = client.download_variant(kRepo, RepoType::kKernel, "main", "torch-cpu", verify);
  REQUIRE(repaired);
  REQUIRE(repaired->repaired.size() == 1);
  CHECK(repaired->repaired[0].path == "build/torch-cpu/big.so");
  CHECK(repaired->repaired[0].blob.filename() == sha256_hex(kBig));
  CHECK(repaired->repaired[0].found != sha256_hex(kBig));
  CHECK(repaired->downloaded_bytes == kBig.size());
  CHECK(read_file(blob) == kBig);
  CHECK(cache_problems(f.cache).empty());

  auto again = client.download_variant(kRepo, RepoType::kKernel, "main", "torch-cpu", verify);
  REQUIRE(again);
  CHECK(again->repaired.empty());
  CHECK(again->downloaded_bytes == 0);

  DownloadOptions force;
  force.force = true;
  auto forced = client.download_variant(kRepo, RepoType::kKernel, "main", "torch-cpu", force);
  REQUIRE(forced);
  CHECK(forced->downloaded_bytes == kBig.size() + kSmall.size());
  CHECK(cache_problems(f.cache).empty());

  // Offline, a changed file cannot be repaired: said, with the blob's name.
  {
    std::fstream flip(blob, std::ios::in | std::ios::out | std::ios::binary);
    flip.seekp(7);
    flip.put(static_cast<char>(kBig[7] ^ 0x01));
  }
  Settings offline = f.settings(f.hub.endpoint());
  offline.offline = true;
  auto refused = HubClient(offline).download_variant(kRepo, RepoType::kKernel, "main", "torch-cpu", verify);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == ErrorCode::kIntegrityMismatch);
  CHECK_THAT(refused.error().message, Catch::Contains("changed in the cache") && Catch::Contains(sha256_hex(kBig)) &&
                                          Catch::Contains("offline"));
}

TEST_CASE("check_cached_repo finds changed blobs, links to nothing and partial downloads") {
  Fixture f;
  f.warm();
  const fs::path repo_dir = f.cache / "kernels--org--kern";
  auto clean = check_cached_repo(repo_dir);
  REQUIRE(clean);
  CHECK(clean->blobs == 2);
  CHECK(clean->bytes == kBig.size() + kSmall.size());
  CHECK(clean->changed.empty());
  CHECK(clean->missing.empty());

  const std::string small_etag = git_blob_sha1(kSmall);
  {
    std::fstream flip(f.blobs() / small_etag, std::ios::in | std::ios::out | std::ios::binary);
    flip.put(static_cast<char>(kSmall[0] ^ 0x01));
  }
  fs::remove(f.blobs() / sha256_hex(kBig));
  std::ofstream(f.blobs() / (sha256_hex(kBig) + ".incomplete")) << kBig.substr(0, 10);
  auto broken = check_cached_repo(repo_dir);
  REQUIRE(broken);
  REQUIRE(broken->changed.size() == 1);
  CHECK(broken->changed[0].blob.blob.filename() == small_etag);
  REQUIRE(broken->changed[0].used_by.size() == 1);
  CHECK(broken->changed[0].used_by[0].path == "build/torch-cpu/small.bin");
  CHECK(broken->changed[0].used_by[0].commit == f.hub.commit("org/kern"));
  REQUIRE(broken->missing.size() == 1);
  CHECK(broken->missing[0].path == "build/torch-cpu/big.so");
  CHECK(broken->partial.size() == 1);
}
