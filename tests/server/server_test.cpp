// Download and read API routes, checked header by header against what huggingface_hub reads.
#include "kernelhub/server/internal/server.hpp"

#include <catch2/catch.hpp>

#include "test_hub.hpp"

using namespace kernelhub::server;
using namespace kernelhub::server::testing;
using nlohmann::json;

TEST_CASE("resolve serves a regular file with the Hub's headers", "[server][download]") {
  TestHub hub;
  REQUIRE(hub.create_repo("relu", "kernel") == 200);
  auto committed =
      hub.commit("kernels/acme/relu", {TestHub::header_line(), TestHub::file_line("build/torch-cpu/x.py", "hello\n")});
  REQUIRE(committed);
  REQUIRE(committed->status == 200);
  const std::string commit = json::parse(committed->body)["commitOid"];

  auto head = hub.client().Head("/kernels/acme/relu/resolve/main/build/torch-cpu/x.py");
  REQUIRE(head);
  CHECK(head->status == 200);
  CHECK(head->get_header_value("X-Repo-Commit") == commit);
  CHECK(head->get_header_value("ETag") == "\"ce013625030ba8dba906f756967f9e9ca394464a\"");  // git hash-object
  CHECK(head->get_header_value("Content-Length") == "6");
  CHECK(head->get_header_value("Accept-Ranges") == "bytes");

  auto get = hub.client().Get(("/kernels/acme/relu/resolve/" + commit + "/build/torch-cpu/x.py").c_str());
  REQUIRE(get);
  CHECK(get->status == 200);
  CHECK(get->body == "hello\n");

  auto range = hub.client().Get("/kernels/acme/relu/resolve/main/build/torch-cpu/x.py", {{"Range", "bytes=1-3"}});
  REQUIRE(range);
  CHECK(range->status == 206);
  CHECK(range->body == "ell");
  CHECK(range->get_header_value("Content-Range") == "bytes 1-3/6");

  auto open_ended = hub.client().Get("/kernels/acme/relu/resolve/main/build/torch-cpu/x.py", {{"Range", "bytes=4-"}});
  CHECK(open_ended->status == 206);
  CHECK(open_ended->body == "o\n");

  auto past_end = hub.client().Get("/kernels/acme/relu/resolve/main/build/torch-cpu/x.py", {{"Range", "bytes=6-"}});
  CHECK(past_end->status == 416);
  CHECK(past_end->get_header_value("Content-Range") == "bytes */6");

  auto not_modified = hub.client().Get("/kernels/acme/relu/resolve/main/build/torch-cpu/x.py",
                                       {{"If-None-Match", "\"ce013625030ba8dba906f756967f9e9ca394464a\""}});
  CHECK(not_modified->status == 304);

  // A revision with a `/` arrives percent-encoded in one segment.
  REQUIRE(hub.client()
              .Post("/api/kernels/acme/relu/branch/feature%2Fx", TestHub::auth(), "{}", "application/json")
              ->status == 200);
  CHECK(hub.client().Head("/kernels/acme/relu/resolve/feature%2Fx/build/torch-cpu/x.py")->status == 200);
}

TEST_CASE("resolve of a large file redirects to the storage host with X-Linked-*", "[server][download]") {
  ServerOptions options;
  options.lfs_threshold = 1024;
  TestHub hub(options);
  REQUIRE(hub.create_repo("big", "") == 200);
  const std::string content(5000, 'z');
  REQUIRE(hub.commit("models/acme/big", {TestHub::header_line(), TestHub::file_line("w.bin", content)})->status == 200);

  auto head = hub.client().Head("/acme/big/resolve/main/w.bin", TestHub::auth());
  REQUIRE(head);
  CHECK(head->status == 302);
  const std::string sha = kernelhub::to_hex(kernelhub::sha256(content));
  CHECK(head->get_header_value("X-Linked-Etag") == "\"" + sha + "\"");
  CHECK(head->get_header_value("X-Linked-Size") == "5000");
  CHECK_FALSE(head->get_header_value("X-Repo-Commit").empty());
  const std::string location = head->get_header_value("Location");
  const auto [origin, path] = split_url(location);
  CHECK(origin == hub.server().storage_url());
  CHECK(origin != hub.server().public_url());  // another host name (token is not forwarded)

  // The storage route needs no token, honours Range, and refuses unsigned URLs.
  httplib::Client storage(origin);
  auto body = storage.Get(path.c_str());
  REQUIRE(body);
  CHECK(body->status == 200);
  CHECK(body->body == content);
  CHECK(body->get_header_value("ETag") == "\"" + sha + "\"");
  auto part = storage.Get(path.c_str(), {{"Range", "bytes=4990-"}});
  CHECK(part->status == 206);
  CHECK(part->body == std::string(10, 'z'));
  auto unsigned_get = storage.Get(("/lfs-storage/" + sha).c_str());
  CHECK(unsigned_get->status == 403);
  CHECK(unsigned_get->get_header_value("X-Error-Code") == "InvalidSignature");

  // The tree marks it as LFS.
  auto tree = json::parse(hub.client().Get("/api/models/acme/big/tree/main")->body);
  bool found = false;
  for (const auto& e : tree) {
    if (e["path"] == "w.bin") {
      found = true;
      CHECK(e["lfs"]["oid"] == sha);
      CHECK(e["lfs"]["size"] == 5000);
      CHECK(e["size"] == 5000);
    }
  }
  CHECK(found);
}

TEST_CASE("errors carry status, X-Error-Code, X-Error-Message and a JSON body", "[server][errors]") {
  TestHub hub;
  REQUIRE(hub.create_repo("relu", "kernel") == 200);
  const std::string head = hub.head("kernels/acme/relu");

  auto missing_repo = hub.client().Head("/kernels/acme/nope/resolve/main/x");
  CHECK(missing_repo->status == 401);  // anonymous: ambiguous, like the Hub
  CHECK(missing_repo->get_header_value("X-Error-Code") == "RepoNotFound");
  auto missing_repo_authed = hub.client().Get("/api/kernels/acme/nope", TestHub::auth(kReadToken));
  CHECK(missing_repo_authed->status == 404);
  CHECK(missing_repo_authed->get_header_value("X-Error-Code") == "RepoNotFound");
  CHECK(json::parse(missing_repo_authed->body)["error"].get<std::string>() == "Repository not found");

  auto bad_rev = hub.client().Get("/kernels/acme/relu/resolve/v9/x", {{"Range", "bytes=0-3"}});
  CHECK(bad_rev->status == 404);
  CHECK(bad_rev->get_header_value("X-Error-Code") == "RevisionNotFound");
  CHECK(json::parse(bad_rev->body)["error"] == bad_rev->get_header_value("X-Error-Message"));  // Range not applied

  auto missing_file = hub.client().Head("/kernels/acme/relu/resolve/main/nope.json");
  CHECK(missing_file->status == 404);
  CHECK(missing_file->get_header_value("X-Error-Code") == "EntryNotFound");
  CHECK(missing_file->get_header_value("X-Repo-Commit") == head);  // for `.no_exist/`

  auto route = hub.client().Get("/api/no-such-route");
  CHECK(route->status == 404);
  CHECK(json::parse(route->body).contains("error"));

  auto bad_token = hub.client().Get("/api/kernels/acme/relu", TestHub::auth("hf_wrong"));
  CHECK(bad_token->status == 401);
  CHECK(bad_token->get_header_value("X-Error-Message") == "Invalid credentials in Authorization header");
}

TEST_CASE("private repos are invisible to others and gated repos need access", "[server][access]") {
  TestHub hub;
  REQUIRE(hub.create_repo("secret", "kernel", /*is_private=*/true) == 200);
  CHECK(hub.client().Get("/api/kernels/acme/secret")->status == 401);
  CHECK(hub.client().Get("/api/kernels/acme/secret", TestHub::auth(kReadToken))->status == 404);
  CHECK(hub.client().Get("/api/kernels/acme/secret", TestHub::auth())->status == 200);
  auto info = json::parse(hub.client().Get("/api/kernels/acme/secret", TestHub::auth())->body);
  CHECK(info["private"] == true);
  CHECK_FALSE(info.contains("siblings"));  // kernel repo info has no siblings

  REQUIRE(hub.create_repo("gated", "") == 200);
  REQUIRE(hub.client()
              .Put("/api/models/acme/gated/settings", TestHub::auth(), R"({"gated": "manual"})", "application/json")
              ->status == 200);
  auto anonymous = hub.client().Head("/acme/gated/resolve/main/.gitattributes");
  CHECK(anonymous->status == 401);
  CHECK(anonymous->get_header_value("X-Error-Code") == "GatedRepo");
  auto bob = hub.client().Head("/acme/gated/resolve/main/.gitattributes", TestHub::auth(kReadToken));
  CHECK(bob->status == 403);
  CHECK(bob->get_header_value("X-Error-Code") == "GatedRepo");
  REQUIRE(
      hub.client()
          .Put("/api/models/acme/gated/settings", TestHub::auth(), R"({"gatedAccess": ["bob"]})", "application/json")
          ->status == 200);
  CHECK(hub.client().Head("/acme/gated/resolve/main/.gitattributes", TestHub::auth(kReadToken))->status == 200);
  CHECK(json::parse(hub.client().Get("/api/models/acme/gated")->body)["gated"] == "manual");
}

TEST_CASE("tree listing is recursive and paginated with Link", "[server][api]") {
  ServerOptions options;
  options.tree_page_size = 3;
  TestHub hub(options);
  REQUIRE(hub.create_repo("relu", "kernel") == 200);
  std::vector<json> lines = {TestHub::header_line()};
  for (const char* p : {"build/torch-cpu/a.py", "build/torch-cpu/b.py", "build/torch-cuda/a.py", "README.md"}) {
    lines.push_back(TestHub::file_line(p, p));
  }
  REQUIRE(hub.commit("kernels/acme/relu", lines)->status == 200);

  std::vector<std::string> paths;
  std::string url = "/api/kernels/acme/relu/tree/main?recursive=true";
  int pages = 0;
  while (!url.empty()) {
    auto res = hub.client().Get(url.c_str());
    REQUIRE(res);
    REQUIRE(res->status == 200);
    for (const auto& e : json::parse(res->body))
      paths.push_back(e["type"].get<std::string>() + ":" + e["path"].get<std::string>());
    const std::string link = res->get_header_value("Link");
    url.clear();
    if (!link.empty()) {
      CHECK(link.ends_with(">; rel=\"next\""));
      url = split_url(link.substr(1, link.find('>') - 1)).second;
    }
    ++pages;
  }
  CHECK(pages == 3);
  CHECK(paths == std::vector<std::string>{"file:.gitattributes", "file:README.md", "directory:build",
                                          "directory:build/torch-cpu", "file:build/torch-cpu/a.py",
                                          "file:build/torch-cpu/b.py", "directory:build/torch-cuda",
                                          "file:build/torch-cuda/a.py"});

  // One level of `build`: the variants, as `kernels` lists them.
  auto level = json::parse(hub.client().Get("/api/kernels/acme/relu/tree/main/build")->body);
  REQUIRE(level.size() == 2);
  CHECK(level[0]["path"] == "build/torch-cpu");
  CHECK(level[0]["type"] == "directory");
  auto missing = hub.client().Get("/api/kernels/acme/relu/tree/main/nope");
  CHECK(missing->status == 404);
  CHECK(missing->get_header_value("X-Error-Code") == "EntryNotFound");
}

TEST_CASE("paths-info, refs, repo info, whoami and organization overview", "[server][api]") {
  TestHub hub;
  REQUIRE(hub.create_repo("relu", "kernel") == 200);
  REQUIRE(hub.create_repo("model", "") == 200);
  REQUIRE(hub.commit("kernels/acme/relu", {TestHub::header_line(), TestHub::file_line("build/a/x.py", "x")})->status ==
          200);

  auto form = hub.client().Post("/api/kernels/acme/relu/paths-info/main",
                                "paths=build%2Fa%2Fx.py&paths=build&paths=nope&expand=false",
                                "application/x-www-form-urlencoded");
  REQUIRE(form->status == 200);
  auto entries = json::parse(form->body);
  REQUIRE(entries.size() == 2);
  CHECK(entries[0]["path"] == "build/a/x.py");
  CHECK(entries[0]["oid"] == "c1b0730e0133447badcfd47fd144e254807b06e1");  // printf x | git hash-object --stdin
  CHECK(entries[1]["type"] == "directory");
  auto as_json = hub.client().Post("/api/kernels/acme/relu/paths-info/main",
                                   R"({"paths": ["build/a/x.py"], "expand": true})", "application/json");
  CHECK(json::parse(as_json->body)[0].contains("lastCommit"));

  const std::string head = hub.head("kernels/acme/relu");
  REQUIRE(hub.client().Post("/api/kernels/acme/relu/branch/v1", TestHub::auth(), "{}", "application/json")->status ==
          200);
  CHECK(hub.client().Post("/api/kernels/acme/relu/branch/v1", TestHub::auth(), "{}", "application/json")->status ==
        409);
  REQUIRE(hub.client()
              .Post("/api/kernels/acme/relu/tag/v1", TestHub::auth(), R"({"tag": "v1.0.0"})", "application/json")
              ->status == 200);
  CHECK(hub.client()
            .Post("/api/kernels/acme/relu/tag/v1", TestHub::auth(), R"({"tag": "v1.0.0"})", "application/json")
            ->status == 409);
  auto refs = json::parse(hub.client().Get("/api/kernels/acme/relu/refs")->body);
  CHECK(refs["converts"] == json::array());
  CHECK(refs["branches"].size() == 2);
  CHECK(refs["tags"][0] == json{{"name", "v1.0.0"}, {"ref", "refs/tags/v1.0.0"}, {"targetCommit", head}});

  auto info = json::parse(hub.client().Get("/api/models/acme/model/revision/main")->body);
  CHECK(info["id"] == "acme/model");
  CHECK(info["siblings"] == json::array({{{"rfilename", ".gitattributes"}}}));
  auto by_tag = json::parse(hub.client().Get("/api/kernels/acme/relu/revision/v1.0.0")->body);
  CHECK(by_tag["sha"] == head);

  auto who = json::parse(hub.client().Get("/api/whoami-v2", TestHub::auth())->body);
  CHECK(who["name"] == "alice");
  CHECK(who["orgs"][0]["name"] == "acme");
  CHECK(who["auth"]["accessToken"]["role"] == "write");
  CHECK(hub.client().Get("/api/whoami-v2")->status == 401);

  auto org = json::parse(hub.client().Get("/api/organizations/acme/overview")->body);
  CHECK(org["trustedKernelPublisher"] == true);
  CHECK(hub.client().Get("/api/organizations/nobody/overview")->status == 404);
  CHECK(json::parse(hub.client().Get("/api/agent-harnesses")->body) ==
        json{{"standardEnvVars", json::array()}, {"harnesses", json::object()}});

  // Delete branch/tag/repo.
  CHECK(hub.client().Delete("/api/kernels/acme/relu/tag/v1.0.0", TestHub::auth())->status == 200);
  CHECK(hub.client().Delete("/api/kernels/acme/relu/branch/v1", TestHub::auth())->status == 200);
  CHECK(hub.client()
            .Delete("/api/repos/delete", TestHub::auth(),
                    R"({"name": "relu", "organization": "acme", "type": "kernel"})", "application/json")
            ->status == 200);
  CHECK(hub.client().Get("/api/kernels/acme/relu", TestHub::auth())->status == 404);
}

TEST_CASE("a restarted server serves exactly what was committed", "[server][durability]") {
  ServerOptions options;
  options.lfs_threshold = 1024;
  TestHub hub(options);
  REQUIRE(hub.create_repo("relu", "kernel") == 200);
  const std::string big(4096, 'b');
  REQUIRE(hub.commit("kernels/acme/relu",
                     {TestHub::header_line(), TestHub::file_line("small.txt", "s"), TestHub::file_line("big.bin", big)})
              ->status == 200);
  REQUIRE(hub.client().Post("/api/kernels/acme/relu/branch/v1", TestHub::auth(), "{}", "application/json")->status ==
          200);
  const std::string head = hub.head("kernels/acme/relu");
  const std::string tree_before = hub.client().Get("/api/kernels/acme/relu/tree/main?recursive=true")->body;

  hub.restart();
  CHECK(hub.head("kernels/acme/relu") == head);
  CHECK(hub.head("kernels/acme/relu", "v1") == head);
  CHECK(hub.client().Get("/api/kernels/acme/relu/tree/main?recursive=true")->body == tree_before);
  CHECK(hub.client().Get("/kernels/acme/relu/resolve/v1/small.txt")->body == "s");
  auto redirect = hub.client().Head("/kernels/acme/relu/resolve/main/big.bin");
  REQUIRE(redirect->status == 302);
  const auto [origin, path] = split_url(redirect->get_header_value("Location"));
  CHECK(httplib::Client(origin).Get(path.c_str())->body == big);  // storage URL signatures survive too
}
