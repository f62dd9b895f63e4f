// Bad input: every case answers a 4xx with X-Error-Code and a message,
// writes nothing outside --root, and leaves the repo as it was.
#include <catch2/catch.hpp>

#include "test_hub.hpp"

using namespace kernelhub::server;
using namespace kernelhub::server::testing;
using nlohmann::json;

namespace {
void check_refused(const httplib::Result& res, int status, const std::string& code) {
  REQUIRE(res);
  INFO("body: " << res->body);
  CHECK(res->status == status);
  CHECK(res->get_header_value("X-Error-Code") == code);
  CHECK_FALSE(res->get_header_value("X-Error-Message").empty());
  const auto body = json::parse(res->body, nullptr, false);
  CHECK((body.is_object() && body.contains("error")));
}
}  // namespace

TEST_CASE("bad paths in commits are refused and the repo is unchanged", "[server][bad_input]") {
  ServerOptions options;
  options.max_body_bytes = 64 * 1024;
  TestHub hub(options);
  REQUIRE(hub.create_repo("relu", "kernel") == 200);
  const std::string head = hub.head("kernels/acme/relu");
  const auto outside_before = list_files(hub.outside());

  for (std::string path :
       {std::string("../escape.txt"), std::string("a/../../escape"), std::string("/etc/passwd"),
        std::string("a\\b.txt"), std::string("nul\0byte", 8), std::string(2000, 'x'), std::string(".git/config")}) {
    INFO("path " << path.size() << " bytes");
    check_refused(hub.commit("kernels/acme/relu", {TestHub::header_line(), TestHub::file_line(path, "evil")}), 400,
                  "BadRequest");
    check_refused(hub.commit("kernels/acme/relu",
                             {TestHub::header_line(), {{"key", "deletedFile"}, {"value", {{"path", path}}}}}),
                  400, "BadRequest");
  }
  // Over-long names in the URL, and escapes through the URL itself.
  check_refused(hub.client().Get("/api/kernels/acme/relu/tree/main/..%2F..%2Fetc"), 400, "BadRequest");
  check_refused(
      hub.client().Post("/api/kernels/acme/relu/paths-info/main", "paths=..%2Fx", "application/x-www-form-urlencoded"),
      400, "BadRequest");
  check_refused(hub.client().Get("/kernels/acme/relu/resolve/main/%zz"), 400, "BadRequest");
  CHECK(hub.client().Get("/kernels/acme/relu/resolve/main/..%2F..%2Fsecret")->status == 404);

  // Malformed NDJSON / JSON.
  auto raw = [&](const std::string& body, const char* type = "application/x-ndjson") {
    return hub.client().Post("/api/kernels/acme/relu/commit/main", TestHub::auth(), body, type);
  };
  check_refused(raw("{not json}\n"), 400, "BadRequest");
  check_refused(raw(TestHub::file_line("a", "b").dump() + "\n"), 400, "BadRequest");  // no header first
  check_refused(raw(TestHub::header_line().dump() + "\n{\"key\":\"bogus\",\"value\":{}}\n"), 400, "BadRequest");
  check_refused(
      raw(TestHub::header_line().dump() + "\n" +
          json{{"key", "file"}, {"value", {{"path", "a"}, {"content", "!!!"}, {"encoding", "base64"}}}}.dump()),
      400, "BadRequest");
  check_refused(raw("[1,2"), 400, "BadRequest");
  check_refused(raw("[]", "application/json"), 400, "BadRequest");
  check_refused(hub.client().Post("/api/repos/create", TestHub::auth(), "{", "application/json"), 400, "BadRequest");

  // An lfsFile whose bytes never arrived.
  check_refused(
      hub.commit("kernels/acme/relu",
                 {TestHub::header_line(),
                  {{"key", "lfsFile"},
                   {"value", {{"path", "w.bin"}, {"algo", "sha256"}, {"oid", std::string(64, 'a')}, {"size", 3}}}}}),
      400, "LfsObjectNotFound");
  check_refused(hub.commit("kernels/acme/relu", {TestHub::header_line(),
                                                 {{"key", "lfsFile"}, {"value", {{"path", "w.bin"}, {"oid", "xyz"}}}}}),
                400, "BadRequest");

  // Fields of the wrong JSON type (each once threw nlohmann's type_error out of the handler).
  check_refused(raw(TestHub::header_line().dump() + "\n" +
                    json{{"key", "file"}, {"value", {{"path", "a"}, {"content", "aGk="}, {"encoding", 7}}}}.dump()),
                400, "BadRequest");
  check_refused(
      raw(TestHub::header_line().dump() + "\n" +
          json{{"key", "lfsFile"}, {"value", {{"path", "a"}, {"algo", 1}, {"oid", std::string(64, 'a')}}}}.dump()),
      400, "BadRequest");
  check_refused(raw(TestHub::header_line().dump() + "\n" + TestHub::file_line("same", "1").dump() + "\n" +
                    json{{"key", "deletedFile"}, {"value", {{"path", "same"}}}}.dump()),
                400, "BadRequest");  // one path twice
  const std::string batch_url = "/kernels/acme/relu.git/info/lfs/objects/batch";
  check_refused(hub.client().Post(batch_url, TestHub::auth(), R"({"operation": 5, "objects": []})",
                                  "application/vnd.git-lfs+json"),
                400, "BadRequest");
  check_refused(
      hub.client().Post(batch_url, TestHub::auth(), R"({"operation": "upload", "hash_algo": [1], "objects": []})",
                        "application/vnd.git-lfs+json"),
      400, "BadRequest");

  // Deeply nested JSON is refused before parsing, in every route that reads a JSON body.
  const std::string deep = std::string(20000, '[') + std::string(20000, ']');
  const std::string deep_object = "{\"objects\": " + deep + "}";
  check_refused(raw(deep, "application/json"), 400, "BadRequest");
  check_refused(raw(TestHub::header_line().dump() + "\n" + deep + "\n"), 400, "BadRequest");
  check_refused(hub.client().Post(batch_url, TestHub::auth(), deep_object, "application/vnd.git-lfs+json"), 400,
                "BadRequest");
  check_refused(hub.client().Post("/api/kernels/acme/relu/preupload/main", TestHub::auth(), deep, "application/json"),
                400, "BadRequest");
  check_refused(hub.client().Post("/api/repos/create", TestHub::auth(), deep, "application/json"), 400, "BadRequest");

  // Bodies over the limit, announced or streamed.
  check_refused(raw(std::string(100 * 1024, ' ')), 413, "PayloadTooLarge");

  // Deleting what does not exist.
  check_refused(hub.commit("kernels/acme/relu",
                           {TestHub::header_line(), {{"key", "deletedFolder"}, {"value", {{"path", "nope/"}}}}}),
                404, "EntryNotFound");

  CHECK(hub.head("kernels/acme/relu") == head);
  CHECK(list_files(hub.outside()).size() == outside_before.size() + 0);
  for (const auto& f : list_files(hub.outside())) {
    INFO(f);
    CHECK((f.starts_with("root/") || f == "tokens.json"));
  }
}

TEST_CASE("uploads whose bytes do not match are refused and not stored", "[server][bad_input]") {
  TestHub hub;
  REQUIRE(hub.create_repo("relu", "kernel") == 200);
  const std::string content = "the real bytes";
  const std::string oid = kernelhub::to_hex(kernelhub::sha256(content));
  json body = {
      {"operation", "upload"}, {"transfers", {"basic"}}, {"objects", {{{"oid", oid}, {"size", content.size()}}}}};
  auto answer = json::parse(hub.client()
                                .Post("/kernels/acme/relu.git/info/lfs/objects/batch", TestHub::auth(), body.dump(),
                                      "application/vnd.git-lfs+json")
                                ->body);
  const auto [origin, path] = split_url(answer["objects"][0]["actions"]["upload"]["href"]);
  httplib::Client storage(origin);
  check_refused(storage.Put(path.c_str(), std::string("the fake bytes"), "application/octet-stream"), 400,
                "LfsOidMismatch");
  check_refused(storage.Put(path.c_str(), std::string("short"), "application/octet-stream"), 400, "LfsSizeMismatch");
  check_refused(storage.Put(path.c_str(), content + "extra", "application/octet-stream"), 400, "LfsSizeMismatch");
  const std::string other = path.substr(0, path.find("sig=")) + "sig=0000";
  check_refused(storage.Put(other.c_str(), content, "application/octet-stream"), 403, "InvalidSignature");
  check_refused(hub.client().Post("/kernels/acme/relu.git/info/lfs/objects/verify", TestHub::auth(),
                                  json{{"oid", oid}, {"size", content.size()}}.dump(), "application/vnd.git-lfs+json"),
                404, "EntryNotFound");
  CHECK_FALSE(std::filesystem::exists(hub.root() / "blobs" / oid.substr(0, 2) / oid));
  CHECK(std::filesystem::is_empty(hub.root() / "tmp"));

  // Malformed batch objects answer per-object errors, as git-lfs specifies.
  json bad = {{"operation", "upload"}, {"objects", {{{"oid", "nothex"}, {"size", 1}}}}};
  auto res = hub.client().Post("/kernels/acme/relu.git/info/lfs/objects/batch", TestHub::auth(), bad.dump(),
                               "application/vnd.git-lfs+json");
  CHECK(json::parse(res->body)["objects"][0]["error"]["code"] == 422);
}

TEST_CASE("missing or wrong tokens cannot write", "[server][bad_input]") {
  TestHub hub;
  REQUIRE(hub.create_repo("relu", "kernel") == 200);
  const std::string head = hub.head("kernels/acme/relu");
  const std::string line = TestHub::header_line().dump() + "\n" + TestHub::file_line("a", "b").dump() + "\n";
  check_refused(hub.client().Post("/api/kernels/acme/relu/commit/main", line, "application/x-ndjson"), 401,
                "Unauthorized");
  check_refused(
      hub.commit("kernels/acme/relu", {TestHub::header_line(), TestHub::file_line("a", "b")}, "main", kReadToken), 403,
      "Forbidden");
  check_refused(
      hub.commit("kernels/acme/relu", {TestHub::header_line(), TestHub::file_line("a", "b")}, "main", "hf_bogus"), 401,
      "Unauthorized");
  check_refused(hub.client().Post("/api/repos/create", TestHub::auth(kReadToken),
                                  R"({"name": "x", "organization": "acme"})", "application/json"),
                403, "Forbidden");
  check_refused(hub.client().Post("/api/repos/create", R"({"name": "x"})", "application/json"), 401, "Unauthorized");
  check_refused(hub.client().Post("/api/kernels/acme/relu/branch/v1", "{}", "application/json"), 401, "Unauthorized");
  check_refused(
      hub.client().Delete("/api/repos/delete", TestHub::auth(kReadToken),
                          R"({"name": "relu", "organization": "acme", "type": "kernel"})", "application/json"),
      403, "Forbidden");
  check_refused(hub.commit("kernels/acme/relu", {TestHub::header_line()}, "nope"), 404, "RevisionNotFound");
  CHECK(hub.head("kernels/acme/relu") == head);
}

TEST_CASE("an over-long URL is refused with a JSON error", "[server][bad_input]") {
  TestHub hub;
  REQUIRE(hub.create_repo("relu", "kernel") == 200);
  check_refused(hub.client().Get(("/kernels/acme/relu/resolve/main/" + std::string(20000, 'a')).c_str()), 414,
                "UriTooLong");
  check_refused(hub.client().Get(("/kernels/acme/relu/resolve/main/" + std::string(3000, 'a')).c_str()), 404,
                "EntryNotFound");
}
