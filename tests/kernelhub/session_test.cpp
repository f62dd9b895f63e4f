// The process's Session: repeated get_kernel calls reuse one TCP connection to the Hub, and a
// forked child opens its own instead of writing into the parent's. Against `kernelhub serve`
// in-process, behind a relay that counts TCP connections.
//
// kernelhub.hpp first: torch's headers define a CHECK of their own, which Catch's must replace.
#include "kernelhub/kernelhub.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "kernelhub/fetch/internal/session.hpp"
#include "kernelhub/internal/load.hpp"
#include "support/tcp_relay.hpp"
#include "test_hub.hpp"

namespace kernelhub {
namespace {

using server::testing::TestHub;

constexpr const char* kRepo = "acme/reference-kernels";

std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// The reference kernels' CPU variant, committed to `hub` as acme/reference-kernels (main).
void publish_cpu_variant(TestHub& hub) {
  REQUIRE(hub.create_repo("reference-kernels", "kernel") == 200);
  std::vector<nlohmann::json> lines{TestHub::header_line()};
  int variants = 0;
  for (const auto& dir : std::filesystem::directory_iterator(std::filesystem::path(KERNELHUB_KERNELS_DIR) / "build")) {
    const std::string name = dir.path().filename().string();
    if (!name.starts_with("torch") || name.find("-cpu-") == std::string::npos) continue;
    ++variants;
    for (const auto& file : std::filesystem::directory_iterator(dir.path())) {
      lines.push_back(
          TestHub::file_line("build/" + name + "/" + file.path().filename().string(), read_bytes(file.path())));
    }
  }
  REQUIRE(variants == 1);
  const auto committed = hub.commit("kernels/" + std::string(kRepo), lines);
  REQUIRE(committed);
  REQUIRE(committed->status == 200);
}

// The configuration of the test's get_kernel calls: the Hub at `endpoint`, a cache and a state
// directory of the test's own, nothing else that could change the answer.
EnvironmentSource hub_environment(const std::string& endpoint, const std::filesystem::path& dir) {
  return map_environment({{"HF_ENDPOINT", endpoint},
                          {"HF_HOME", (dir / "hf-home").string()},
                          {"HF_HUB_CACHE", (dir / "cache").string()},
                          {"KERNELHUB_STATE_DIR", (dir / "state").string()}});
}

GetKernelOptions main_on_cpu() {
  GetKernelOptions options;
  options.revision = "main";
  options.backend = "cpu";
  return options;
}

TEST_CASE("repeated get_kernel calls reuse one connection to the Hub") {
  server::ServerOptions options;
  options.lfs_threshold = 1ull << 30;  // every file served by the Hub itself, on the relayed port
  TestHub hub(options);
  publish_cpu_variant(hub);
  testing::TcpRelay relay(hub.server().port());
  const EnvironmentSource env = hub_environment(relay.url(), hub.outside());

  // The download, on a Session of its own (its connections are its own: several, in parallel).
  const auto filling = std::make_shared<Session>();
  const Kernel first = get_kernel(kRepo, main_on_cpu(), env, filling);
  CHECK(first.timings().requests > 1);
  CHECK(filling->connections_opened() >= 1);

  // Warm: each call asks the Hub for the revision (and the first, for the publisher's trust),
  // all over the one connection the first of them opened.
  const int before = relay.accepted();
  int requests = 0;
  for (int call = 0; call < 10; ++call) {
    const Kernel kernel = get_kernel(kRepo, main_on_cpu(), env);
    CHECK(kernel.variant() == first.variant());
    requests += kernel.timings().requests;
  }
  CHECK(requests >= 10);
  CHECK(relay.accepted() - before == 1);
  CHECK(Session::process_default().connections_opened() == 1);

  // A forked child must not write into the parent's connection: it opens one of its own.
  const int before_fork = relay.accepted();
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    int status = 1;
    try {
      status = get_kernel(kRepo, main_on_cpu(), env).variant() == first.variant() ? 0 : 1;
    } catch (...) {
      status = 2;
    }
    _exit(status);
  }
  int status = -1;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(relay.accepted() - before_fork == 1);
}

}  // namespace
}  // namespace kernelhub
