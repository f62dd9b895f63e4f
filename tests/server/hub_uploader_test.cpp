// client::HubUploader (the write side hub-publish uses) against an in-process `kernelhub serve`:
// preupload, LFS basic and multipart, resume after a dropped upload, a branch that moved since
// the plan, refused files, and wrong or expired tokens.
#include <catch2/catch.hpp>
#include <fstream>

#include "kernelhub/client/internal/upload.hpp"
#include "test_hub.hpp"

using namespace kernelhub;
using namespace kernelhub::server::testing;
using client::CommitChange;

namespace {

client::Settings settings_for(const std::string& endpoint, const std::string& token = kWriteToken) {
  client::Settings s;
  s.endpoint = endpoint;
  s.token = client::Token(token);
  s.max_retries = 0;  // the tests make every failure visible at once
  return s;
}

client::UploadFile write_file(const std::filesystem::path& dir, const std::string& name, const std::string& content,
                              const std::string& path_in_repo) {
  std::ofstream(dir / name, std::ios::binary) << content;
  auto file = client::describe_upload_file(dir / name, path_in_repo);
  REQUIRE(file);
  return *file;
}

const client::RepoId kRepo{"acme", "relu"};
constexpr auto kKernel = RepoType::kKernel;

// preupload + LFS + one commit on `branch`, as hub-publish does it.
Result<client::CommitResult> publish(const client::HubUploader& up, const std::vector<const client::UploadFile*>& files,
                                     const std::string& branch, const std::optional<std::string>& parent,
                                     client::LfsUploadStats* stats = nullptr) {
  KH_ASSIGN_OR_RETURN(auto answers, up.preupload(kRepo, kKernel, branch, files));
  std::vector<const client::UploadFile*> lfs;
  std::vector<CommitChange> changes;
  for (std::size_t i = 0; i < files.size(); ++i) {
    const bool is_lfs = answers[i].mode == client::UploadMode::kLfs;
    if (is_lfs) lfs.push_back(files[i]);
    changes.push_back({is_lfs ? CommitChange::Kind::kAddLfs : CommitChange::Kind::kAddRegular, files[i], {}});
  }
  KH_ASSIGN_OR_RETURN(auto sent, up.upload_lfs(kRepo, kKernel, branch, lfs));
  if (stats) *stats = sent;
  return up.commit(kRepo, kKernel, branch, parent, "publish", "", changes);
}

}  // namespace

TEST_CASE("HubUploader publishes regular, basic LFS and multipart LFS files in one commit", "[publish]") {
  server::ServerOptions options;
  options.lfs_threshold = 1000;
  options.multipart_chunk_bytes = 64 * 1024;
  TestHub hub(options);
  client::HubUploader up(settings_for(hub.server().public_url()), client::make_curl_transport());
  REQUIRE(up.whoami().value() == "alice");
  REQUIRE(up.create_repo(kRepo, kKernel, false, false));
  REQUIRE(up.create_repo(kRepo, kKernel, false, true));  // exist_ok
  CHECK_FALSE(up.create_repo(kRepo, kKernel, false, false));

  TempDir dir;
  const auto small = write_file(dir.path(), "a", "tiny text", "build/v/a.py");
  const auto basic = write_file(dir.path(), "b", std::string(5000, 'b'), "build/v/b.bin");
  std::string big(200 * 1024 + 17, '\0');
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 7);
  const auto multi = write_file(dir.path(), "c", big, "build/v/c.so");

  const auto main_head = up.branch_head(kRepo, kKernel, "main").value();
  REQUIRE(main_head);
  REQUIRE_FALSE(up.branch_head(kRepo, kKernel, "v1").value());
  REQUIRE(up.create_branch(kRepo, kKernel, "v1", *main_head));
  client::LfsUploadStats stats;
  auto made = publish(up, {&small, &basic, &multi}, "v1", *main_head, &stats);
  REQUIRE(made);
  CHECK(stats.objects_sent == 2);
  CHECK(stats.multipart_objects == 1);
  CHECK(up.branch_head(kRepo, kKernel, "v1").value() == made->commit_oid);

  const auto tree = up.list_files(kRepo, kKernel, made->commit_oid).value();
  const auto files = tree.under("build/");
  REQUIRE(files.size() == 3);
  CHECK(files[0]->path == "build/v/a.py");
  CHECK_FALSE(files[0]->is_lfs());
  CHECK(files[0]->blob_id == small.git_sha1);
  CHECK(files[1]->lfs_sha256 == basic.sha256);
  CHECK(files[2]->lfs_sha256 == multi.sha256);

  // Content the server has is not sent again.
  auto again = up.upload_lfs(kRepo, kKernel, "v1", {&basic, &multi});
  REQUIRE(again);
  CHECK(again->objects_sent == 0);
  CHECK(again->objects_present == 2);
}

TEST_CASE("HubUploader: a dropped upload fails, and a second run sends only what is missing", "[publish]") {
  server::ServerOptions options;
  options.lfs_threshold = 1000;
  options.fault_cut_upload_after_bytes = 100 * 1024;
  TestHub hub(options);
  client::HubUploader up(settings_for(hub.server().public_url()), client::make_curl_transport());
  REQUIRE(up.create_repo(kRepo, kKernel, false, false));
  TempDir dir;
  const auto small = write_file(dir.path(), "a", std::string(4000, 'a'), "build/v/a.bin");
  const auto big = write_file(dir.path(), "b", std::string(300 * 1024, 'b'), "build/v/b.so");
  const auto head = up.branch_head(kRepo, kKernel, "main").value();

  auto cut = publish(up, {&small, &big}, "main", head);
  REQUIRE_FALSE(cut);
  CHECK(cut.error().code == ErrorCode::kNetwork);
  CHECK_THAT(cut.error().message, Catch::Contains("run the command again"));
  CHECK(up.branch_head(kRepo, kKernel, "main").value() == head);  // nothing committed

  client::LfsUploadStats stats;
  auto made = publish(up, {&small, &big}, "main", head, &stats);
  REQUIRE(made);
  CHECK(stats.objects_present == 1);  // the small object survived the cut run
  CHECK(stats.objects_sent == 1);
}

TEST_CASE("HubUploader: a branch that moved since the plan is refused, nothing is committed", "[publish]") {
  TestHub hub;
  client::HubUploader up(settings_for(hub.server().public_url()), client::make_curl_transport());
  REQUIRE(up.create_repo(kRepo, kKernel, false, false));
  const auto planned = up.branch_head(kRepo, kKernel, "main").value();
  TempDir dir;
  const auto first = write_file(dir.path(), "a", "one", "a.txt");
  REQUIRE(publish(up, {&first}, "main", planned));  // someone else commits meanwhile
  const auto moved = up.branch_head(kRepo, kKernel, "main").value();

  const auto mine = write_file(dir.path(), "b", "two", "b.txt");
  auto refused = publish(up, {&mine}, "main", planned);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == ErrorCode::kInvalidArgument);
  CHECK_THAT(refused.error().message, Catch::Contains("moved since the upload was planned"));
  CHECK(up.branch_head(kRepo, kKernel, "main").value() == moved);
}

TEST_CASE("HubUploader: files the server refuses are all named, before anything is sent", "[publish]") {
  server::ServerOptions options;
  options.lfs_threshold = 10;
  options.max_lfs_object_bytes = 1000;
  TestHub hub(options);
  client::HubUploader up(settings_for(hub.server().public_url()), client::make_curl_transport());
  REQUIRE(up.create_repo(kRepo, kKernel, false, false));
  TempDir dir;
  const auto ok = write_file(dir.path(), "a", std::string(100, 'a'), "a.bin");
  const auto big1 = write_file(dir.path(), "b", std::string(2000, 'b'), "b.bin");
  const auto big2 = write_file(dir.path(), "c", std::string(3000, 'c'), "c.bin");
  auto refused = up.upload_lfs(kRepo, kKernel, "main", {&ok, &big1, &big2});
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == ErrorCode::kInvalidArgument);
  CHECK_THAT(refused.error().message, Catch::Contains("b.bin") && Catch::Contains("c.bin"));
  // Not even the acceptable object was sent.
  CHECK(up.upload_lfs(kRepo, kKernel, "main", {&ok}).value().objects_sent == 1);
}

TEST_CASE("HubUploader: wrong, expired, read-only and missing tokens are told apart", "[publish]") {
  TempDir dir;
  std::ofstream(dir.path() / "tokens.json") << R"({"tokens": {
      "hf_write_alice": {"user": "alice", "orgs": ["acme"], "write": true},
      "hf_read_bob": {"user": "bob", "write": false},
      "hf_expired": {"user": "carol", "orgs": ["acme"], "write": true, "expires": 1000}}})";
  server::ServerOptions options;
  options.root = dir.path() / "root";
  options.tokens_file = dir.path() / "tokens.json";
  options.threads = 4;
  auto server = server::Server::create(options);
  REQUIRE(server);
  REQUIRE((*server)->start());
  const std::string endpoint = (*server)->public_url();
  {
    client::HubUploader up(settings_for(endpoint, "hf_not_a_token"), client::make_curl_transport());
    auto who = up.whoami();
    REQUIRE_FALSE(who);
    CHECK(who.error().code == ErrorCode::kUnauthorized);
    CHECK_THAT(who.error().message, Catch::Contains("HF_TOKEN"));
  }
  {
    client::HubUploader up(settings_for(endpoint, "hf_expired"), client::make_curl_transport());
    auto who = up.whoami();
    REQUIRE_FALSE(who);
    CHECK(who.error().code == ErrorCode::kUnauthorized);
    CHECK_THAT(who.error().message, Catch::Contains("expired"));
  }
  {
    client::HubUploader up(settings_for(endpoint, kReadToken), client::make_curl_transport());
    auto made = up.create_repo(client::RepoId{"acme", "x"}, kKernel, false, false);
    REQUIRE_FALSE(made);
    CHECK(made.error().code == ErrorCode::kUnauthorized);
  }
  {
    auto s = settings_for(endpoint);
    s.token.reset();
    client::HubUploader up(s, client::make_curl_transport());
    auto who = up.whoami();
    REQUIRE_FALSE(who);
    CHECK_THAT(who.error().message, Catch::Contains("set HF_TOKEN"));
  }
  (*server)->stop();
}

TEST_CASE("GET commits/{rev} lists the history newest first, as list_repo_commits reads it", "[publish]") {
  TestHub hub;
  REQUIRE(hub.create_repo("relu", "kernel") == 200);
  const auto first = hub.head("kernels/acme/relu");
  REQUIRE(hub.commit("kernels/acme/relu", {TestHub::header_line("one"), TestHub::file_line("a.txt", "1")})->status ==
          200);
  REQUIRE(hub.commit("kernels/acme/relu", {TestHub::header_line("two"), TestHub::file_line("b.txt", "2")})->status ==
          200);
  auto res = hub.client().Get("/api/kernels/acme/relu/commits/main", TestHub::auth());
  REQUIRE(res);
  REQUIRE(res->status == 200);
  const auto list = nlohmann::json::parse(res->body);
  REQUIRE(list.size() == 3);
  CHECK(list[0]["id"] == hub.head("kernels/acme/relu"));
  CHECK(list[0]["title"] == "two");
  CHECK(list[1]["title"] == "one");
  CHECK(list[2]["id"] == first);
  CHECK(hub.client().Get("/api/kernels/acme/relu/commits/nope", TestHub::auth())->status == 404);
}
