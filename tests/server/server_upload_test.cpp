// The upload protocol as huggingface_hub drives it without Xet: preupload → LFS batch → PUT to
// the storage host (no token) → verify → NDJSON commit.
#include <atomic>
#include <catch2/catch.hpp>
#include <thread>

#include "test_hub.hpp"

using namespace kernelhub::server;
using namespace kernelhub::server::testing;
using nlohmann::json;

namespace {
json batch(TestHub& hub, const std::string& repo_path, const std::string& oid, std::size_t size) {
  json body = {{"operation", "upload"},
               {"transfers", {"basic", "multipart"}},
               {"objects", {{{"oid", oid}, {"size", size}}}},
               {"hash_algo", "sha256"},
               {"ref", {{"name", "main"}}}};
  auto res = hub.client().Post((repo_path + ".git/info/lfs/objects/batch").c_str(), TestHub::auth(), body.dump(),
                               "application/vnd.git-lfs+json");
  REQUIRE(res);
  REQUIRE(res->status == 200);
  return json::parse(res->body);
}
}  // namespace

TEST_CASE("preupload classifies files and reports existing oids", "[server][upload]") {
  TestHub hub;
  REQUIRE(hub.create_repo("relu", "kernel") == 200);
  json body = {{"files",
                {{{"path", "a.txt"}, {"sample", kernelhub::base64_encode("text")}, {"size", 4}},
                 {{"path", "lib.so"},
                  {"sample", kernelhub::base64_encode(std::string("\x7f"
                                                                  "ELF\0\0",
                                                                  6))},
                  {"size", 6}},
                 {{"path", "big.bin"}, {"sample", kernelhub::base64_encode("aaaa")}, {"size", 20 * 1024 * 1024}},
                 {{"path", ".gitattributes"}, {"sample", ""}, {"size", 10}}}}};
  auto res =
      hub.client().Post("/api/kernels/acme/relu/preupload/main", TestHub::auth(), body.dump(), "application/json");
  REQUIRE(res->status == 200);
  auto files = json::parse(res->body)["files"];
  CHECK(files[0]["uploadMode"] == "regular");
  CHECK(files[1]["uploadMode"] == "lfs");  // binary sample
  CHECK(files[2]["uploadMode"] == "lfs");  // >= 10 MB
  CHECK(files[0]["shouldIgnore"] == false);
  CHECK(files[3].contains("oid"));
  CHECK_FALSE(files[0].contains("oid"));
}

TEST_CASE("basic LFS upload, verify and lfsFile commit", "[server][upload]") {
  TestHub hub;
  REQUIRE(hub.create_repo("relu", "kernel") == 200);
  const std::string content(3 * 1024 * 1024 + 17, 'q');
  const std::string oid = kernelhub::to_hex(kernelhub::sha256(content));

  auto answer = batch(hub, "/kernels/acme/relu", oid, content.size());
  CHECK(answer["transfer"] == "basic");
  const auto& object = answer["objects"][0];
  const auto [origin, upload_path] = split_url(object["actions"]["upload"]["href"]);
  CHECK(origin == hub.server().storage_url());
  httplib::Client storage(origin);
  auto put = storage.Put(upload_path.c_str(), content, "application/octet-stream");  // no token, like huggingface_hub
  REQUIRE(put);
  CHECK(put->status == 200);
  const auto [verify_origin, verify_path] = split_url(object["actions"]["verify"]["href"]);
  auto verify = hub.client().Post(verify_path.c_str(), TestHub::auth(),
                                  json{{"oid", oid}, {"size", content.size()}}.dump(), "application/vnd.git-lfs+json");
  CHECK(verify->status == 200);

  // A second batch for the same object needs no upload.
  CHECK_FALSE(batch(hub, "/kernels/acme/relu", oid, content.size())["objects"][0].contains("actions"));

  auto commit =
      hub.commit("kernels/acme/relu",
                 {TestHub::header_line(),
                  {{"key", "lfsFile"},
                   {"value", {{"path", "build/w.bin"}, {"algo", "sha256"}, {"oid", oid}, {"size", content.size()}}}}});
  REQUIRE(commit->status == 200);
  auto head = hub.client().Head("/kernels/acme/relu/resolve/main/build/w.bin");
  CHECK(head->status == 302);  // committed as lfsFile: LFS even below the size threshold
  CHECK(head->get_header_value("X-Linked-Size") == std::to_string(content.size()));
  const auto [o, p] = split_url(head->get_header_value("Location"));
  CHECK(httplib::Client(o).Get(p.c_str())->body == content);
}

TEST_CASE("multipart LFS upload assembles parts and checks the digest", "[server][upload]") {
  ServerOptions options;
  options.multipart_chunk_bytes = 1024 * 1024;
  TestHub hub(options);
  REQUIRE(hub.create_repo("big", "") == 200);
  std::string content(2 * 1024 * 1024 + 5, '\0');
  for (std::size_t i = 0; i < content.size(); ++i) content[i] = static_cast<char>(i * 7);
  const std::string oid = kernelhub::to_hex(kernelhub::sha256(content));
  auto answer = batch(hub, "/acme/big", oid, content.size());
  CHECK(answer["transfer"] == "multipart");
  const auto& upload = answer["objects"][0]["actions"]["upload"];
  const std::size_t chunk = std::stoul(upload["header"]["chunk_size"].get<std::string>());
  CHECK(chunk == 1024 * 1024);
  json parts = json::array();
  for (int i = 1; i <= 3; ++i) {
    char key[8];
    std::snprintf(key, sizeof key, "%05d", i);
    const auto [origin, path] = split_url(upload["header"][key]);
    auto res =
        httplib::Client(origin).Put(path.c_str(), content.substr((i - 1) * chunk, chunk), "application/octet-stream");
    REQUIRE(res->status == 200);
    parts.push_back({{"partNumber", i}, {"etag", res->get_header_value("ETag")}});
  }
  CHECK_FALSE(upload["header"].contains("00004"));
  const auto [origin, complete_path] = split_url(upload["href"]);
  // A wrong etag is refused; the right list completes.
  json wrong = {{"oid", oid}, {"parts", parts}};
  wrong["parts"][1]["etag"] = std::string(32, 'a');
  CHECK(httplib::Client(origin).Post(complete_path.c_str(), wrong.dump(), "application/json")->status == 400);
  auto done = httplib::Client(origin).Post(complete_path.c_str(), json{{"oid", oid}, {"parts", parts}}.dump(),
                                           "application/json");
  REQUIRE(done->status == 200);
  auto commit =
      hub.commit("models/acme/big",
                 {TestHub::header_line(),
                  {{"key", "lfsFile"},
                   {"value", {{"path", "w.bin"}, {"algo", "sha256"}, {"oid", oid}, {"size", content.size()}}}}});
  CHECK(commit->status == 200);
}

TEST_CASE("commit handles deletes, parentCommit and create_pr", "[server][upload]") {
  TestHub hub;
  REQUIRE(hub.create_repo("m", "") == 200);
  auto first = hub.commit("models/acme/m", {TestHub::header_line(), TestHub::file_line("a/x.txt", "1"),
                                            TestHub::file_line("a/y.txt", "2"), TestHub::file_line("b.txt", "3")});
  REQUIRE(first->status == 200);
  const std::string c1 = json::parse(first->body)["commitOid"];
  json header = TestHub::header_line("delete");
  header["value"]["parentCommit"] = c1.substr(0, 10);
  auto second = hub.commit("models/acme/m", {header,
                                             {{"key", "deletedFolder"}, {"value", {{"path", "a/"}}}},
                                             {{"key", "deletedFile"}, {"value", {{"path", "b.txt"}}}}});
  REQUIRE(second->status == 200);
  auto tree = json::parse(hub.client().Get("/api/models/acme/m/tree/main?recursive=1")->body);
  CHECK(tree.size() == 1);  // .gitattributes only

  // A stale parent is refused and changes nothing.
  const std::string c2 = hub.head("models/acme/m");
  json stale = TestHub::header_line("stale");
  stale["value"]["parentCommit"] = c1;
  auto refused = hub.commit("models/acme/m", {stale, TestHub::file_line("z.txt", "z")});
  CHECK(refused->status == 412);
  CHECK(refused->get_header_value("X-Error-Code") == "ParentCommitMismatch");
  CHECK(hub.head("models/acme/m") == c2);

  auto pr = hub.client().Post("/api/models/acme/m/commit/main?create_pr=1", TestHub::auth(),
                              TestHub::header_line("pr").dump() + "\n" + TestHub::file_line("p.txt", "p").dump() + "\n",
                              "application/x-ndjson");
  REQUIRE(pr->status == 200);
  CHECK(json::parse(pr->body)["pullRequestUrl"].get<std::string>().ends_with("/discussions/1"));
  CHECK(hub.head("models/acme/m") == c2);
  auto refs = json::parse(hub.client().Get("/api/models/acme/m/refs?include_prs=1")->body);
  CHECK(refs["pullRequests"][0]["ref"] == "refs/pr/1");
  CHECK(hub.client().Head("/acme/m/resolve/refs%2Fpr%2F1/p.txt")->status == 200);

  // JSON commit body (the Hub accepts it as well as NDJSON).
  auto as_json = hub.client().Post(
      "/api/models/acme/m/commit/main", TestHub::auth(),
      json{{"summary", "json"},
           {"files", {{{"path", "j.txt"}, {"content", kernelhub::base64_encode("j")}, {"encoding", "base64"}}}}}
          .dump(),
      "application/json");
  CHECK(as_json->status == 200);
  CHECK(hub.client().Get("/acme/m/resolve/main/j.txt")->body == "j");
}

TEST_CASE("concurrent commits are serialized and none is lost", "[server][upload]") {
  TestHub hub;
  REQUIRE(hub.create_repo("busy", "") == 200);
  const int kWriters = 8;
  std::vector<std::thread> writers;
  std::atomic<int> ok{0};
  for (int i = 0; i < kWriters; ++i) {
    writers.emplace_back([&, i] {
      httplib::Client client("127.0.0.1", hub.server().port());
      const std::string body = TestHub::header_line().dump() + "\n" +
                               TestHub::file_line("f" + std::to_string(i) + ".txt", std::to_string(i)).dump() + "\n";
      auto res = client.Post("/api/models/acme/busy/commit/main", TestHub::auth(), body, "application/x-ndjson");
      if (res && res->status == 200) ++ok;
    });
  }
  for (auto& w : writers) w.join();
  CHECK(ok == kWriters);
  auto tree = json::parse(hub.client().Get("/api/models/acme/busy/tree/main")->body);
  CHECK(tree.size() == kWriters + 1);  // + .gitattributes
}
