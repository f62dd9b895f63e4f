// What an operator relies on: the server owns its port, and a request's id is the client's.
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <memory>
#include <sstream>

#include "kernelhub/server/internal/server.hpp"
#include "test_hub.hpp"

using namespace kernelhub;
using namespace kernelhub::server;
using namespace kernelhub::server::testing;
using nlohmann::json;

TEST_CASE("a second server on a busy port fails at start, and the first keeps every request", "[server][port]") {
  TestHub first;
  REQUIRE(first.create_repo("relu", "kernel") == 200);
  TempDir other;
  ServerOptions options;
  options.root = other.path() / "root";
  options.port = first.server().port();
  auto second = Server::create(options);
  REQUIRE(second);
  const Status started = (*second)->start();
  REQUIRE_FALSE(started);
  CHECK(started.error().code == ErrorCode::kIo);
  CHECK_THAT(started.error().message, Catch::Contains("already in use") && Catch::Contains("--port"));
  // Every request still reaches the first server (the second has no such repo and no tokens).
  for (int i = 0; i < 20; ++i) {
    httplib::Client client("127.0.0.1", first.server().port());  // a new connection each time
    auto res = client.Get("/api/kernels/acme/relu", TestHub::auth());
    REQUIRE(res);
    CHECK(res->status == 200);
  }
}

// A server stopped the moment start() returned (a SIGTERM right after the URL was printed): stop()
// returns. Before start() waited for the listen loop, about one stop in ten hung, the loop not yet
// running when stop() ran and accepting forever after (a regression hangs or fails here).
TEST_CASE("a server stopped as soon as it started stops", "[server][port]") {
  TempDir dir;
  for (int i = 0; i < 50; ++i) {
    ServerOptions options;
    options.root = dir.path() / "root";
    options.threads = 2;
    auto server = Server::create(options);
    REQUIRE(server);
    REQUIRE((*server)->start());
    (*server)->stop();
  }
}

TEST_CASE("a server whose port another socket holds with SO_REUSEPORT still fails at start", "[server][port]") {
  // What an older server (or any program that shares ports) holds: SO_REUSEPORT only helps those
  // that set it too, and this server does not.
  const int holder = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(holder >= 0);
  int yes = 1;
  ::setsockopt(holder, SOL_SOCKET, SO_REUSEPORT, &yes, sizeof yes);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(holder, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(::listen(holder, 4) == 0);
  socklen_t length = sizeof addr;
  REQUIRE(::getsockname(holder, reinterpret_cast<sockaddr*>(&addr), &length) == 0);
  TempDir dir;
  ServerOptions options;
  options.root = dir.path() / "root";
  options.port = ntohs(addr.sin_port);
  auto server = Server::create(options);
  REQUIRE(server);
  const Status started = (*server)->start();
  ::close(holder);
  REQUIRE_FALSE(started);
  CHECK_THAT(started.error().message, Catch::Contains("already in use"));
}

TEST_CASE("the listening socket's backlog is the system's, not cpp-httplib's 5", "[server][port]") {
  // ss prints a listening socket's backlog as its Send-Q; a backlog of 5 makes the sixth of a
  // burst of clients wait for a SYN retry (a second or more) while the server is busy.
  TestHub hub;
  const std::string command = "ss -Hltn 'sport = :" + std::to_string(hub.server().port()) + "' 2>/dev/null";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(command.c_str(), "r"), ::pclose);
  REQUIRE(pipe);
  char line[512] = {};
  if (std::fgets(line, sizeof line, pipe.get()) == nullptr) {
    WARN("`ss` (iproute2) is not installed: the backlog is not checked");
    return;
  }
  // "LISTEN 0 4096 127.0.0.1:PORT 0.0.0.0:*"
  std::istringstream fields(line);
  std::string state;
  long queued = -1, backlog = -1;
  fields >> state >> queued >> backlog;
  CHECK(state == "LISTEN");
  CHECK(backlog >= 128);
}

TEST_CASE("the client's request id comes back on the answer", "[server][request-id]") {
  TestHub hub;
  auto own = hub.client().Get("/api/kernels/acme/none", {{"X-Request-Id", "client-id-42"}});
  REQUIRE(own);
  CHECK(own->get_header_value("X-Request-Id") == "client-id-42");
  // huggingface_hub sends its id as X-Amzn-Trace-Id on every request.
  auto traced = hub.client().Get("/api/whoami-v2", {{"X-Amzn-Trace-Id", "5c1d0b2e-6f2a-4c3e-9d1b-0a2b3c4d5e6f"}});
  REQUIRE(traced);
  CHECK(traced->get_header_value("X-Request-Id") == "5c1d0b2e-6f2a-4c3e-9d1b-0a2b3c4d5e6f");
  CHECK(traced->get_header_value("X-Amzn-Trace-Id") == "5c1d0b2e-6f2a-4c3e-9d1b-0a2b3c4d5e6f");
  // None sent, or one that cannot go back in a header: an id of the server's own.
  auto none = hub.client().Get("/api/whoami-v2");
  REQUIRE(none);
  CHECK(none->get_header_value("X-Request-Id").starts_with("Root=1-"));
  auto bad = hub.client().Get("/api/whoami-v2", {{"X-Request-Id", std::string(300, 'a')}});
  REQUIRE(bad);
  CHECK(bad->get_header_value("X-Request-Id").starts_with("Root=1-"));
}

TEST_CASE("settings/repositories lists a namespace's repos with the bytes they keep", "[server][api]") {
  TestHub hub;
  REQUIRE(hub.create_repo("relu", "kernel") == 200);
  REQUIRE(hub.create_repo("gelu", "kernel") == 200);
  REQUIRE(hub.create_repo("llm", "") == 200);
  auto committed = hub.commit("kernels/acme/relu", {TestHub::header_line(), TestHub::file_line("a.txt", "12345")});
  REQUIRE(committed);
  REQUIRE(committed->status == 200);

  auto anonymous = hub.client().Get("/api/settings/repositories");
  REQUIRE(anonymous);
  CHECK(anonymous->status == 401);
  auto not_member = hub.client().Get("/api/organizations/acme/settings/repositories", TestHub::auth(kReadToken));
  REQUIRE(not_member);
  CHECK(not_member->status == 403);

  auto listed = hub.client().Get("/api/organizations/acme/settings/repositories", TestHub::auth());
  REQUIRE(listed);
  REQUIRE(listed->status == 200);
  const json repos = json::parse(listed->body);
  REQUIRE(repos.size() == 3);
  std::map<std::string, json> by_id;
  for (const auto& r : repos) by_id[r["type"].get<std::string>() + " " + r["id"].get<std::string>()] = r;
  const json& relu = by_id.at("kernel acme/relu");
  const json& gelu = by_id.at("kernel acme/gelu");
  CHECK(by_id.contains("model acme/llm"));
  CHECK(relu["visibility"] == "public");
  CHECK(relu["storage"].get<std::uint64_t>() == gelu["storage"].get<std::uint64_t>() + 5);  // + a.txt
  double percent = 0;
  for (const auto& r : repos) percent += r["storagePercent"].get<double>();
  CHECK(percent == Approx(100.0));
  CHECK_FALSE(relu["updatedAt"].get<std::string>().empty());

  // The caller's own namespace: alice has none.
  auto own = hub.client().Get("/api/settings/repositories", TestHub::auth());
  REQUIRE(own);
  CHECK(own->status == 200);
  CHECK(json::parse(own->body).empty());
}
