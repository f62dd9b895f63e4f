// Regression tests for inputs the fuzzers (fuzz/) found or aimed at: response headers with
// out-of-range waits, and tree cache files whose fields have the wrong JSON type or nest deeply.
// Each of these used to throw or overflow instead of returning a value or a kCorruptFile error.
// Also: the transport speaks HTTP(S) only, whatever URL a redirect names (docs/SECURITY.md).
#include <catch2/catch.hpp>
#include <string>

#include "hub_answers.hpp"
#include "hub_errors.hpp"
#include "kernelhub/client/internal/repo_tree.hpp"
#include "kernelhub/client/internal/transport.hpp"

using namespace kernelhub;
using namespace kernelhub::client;

namespace {

Response with_header(std::string name, std::string value) {
  Response response;
  response.status = 429;
  response.headers.push_back({std::move(name), std::move(value)});
  return response;
}

constexpr const char* kCommit = "0123456789abcdef0123456789abcdef01234567";

}  // namespace

TEST_CASE("retry_after: a huge Retry-After is capped at a day instead of overflowing") {
  const auto wait = retry_after(with_header("retry-after", "588888888888888888"));
  REQUIRE(wait);
  CHECK(*wait == std::chrono::milliseconds(24LL * 60 * 60 * 1000));
  CHECK(retry_after(with_header("retry-after", "5")) == std::chrono::milliseconds(5000));
  CHECK_FALSE(retry_after(with_header("retry-after", "-3")));
}

TEST_CASE("retry_after: a RateLimit t= out of range is clamped to [0, a day] (plus the extra second)") {
  const auto huge = retry_after(with_header("ratelimit", "\"api\";r=0;t=9223372036854775807"));
  REQUIRE(huge);
  CHECK(*huge == std::chrono::milliseconds((24LL * 60 * 60 + 1) * 1000));
  const auto negative = retry_after(with_header("ratelimit", "\"api\";r=0;t=-50"));
  REQUIRE(negative);
  CHECK(*negative == std::chrono::milliseconds(1000));
}

TEST_CASE("RepoTree::from_cache_json: wrong field types are kCorruptFile, not an exception") {
  for (const std::string text : {
           R"({"format_version": 1, "files": {"a": {"size": "12", "blob_id": "x"}}})",
           R"({"format_version": 1, "files": {"a": {"size": -1, "blob_id": "x"}}})",
           R"({"format_version": 1, "files": {"a": {"size": 1, "blob_id": 7}}})",
           R"({"format_version": "1", "files": {}})",
           R"({"format_version": null, "files": {}})",
       }) {
    INFO(text);
    auto tree = RepoTree::from_cache_json(kCommit, text);
    REQUIRE_FALSE(tree);
    CHECK(tree.error().code == ErrorCode::kCorruptFile);
    CHECK_THAT(tree.error().message, Catch::Contains(kCommit));
  }
}

TEST_CASE("RepoTree::from_cache_json: deep nesting is refused before parsing") {
  const std::string deep =
      R"({"format_version": 1, "files": {}, "x": )" + std::string(100000, '[') + std::string(100000, ']') + "}";
  auto tree = RepoTree::from_cache_json(kCommit, deep);
  REQUIRE_FALSE(tree);
  CHECK(tree.error().code == ErrorCode::kCorruptFile);
}

TEST_CASE("RepoTree::from_cache_json: a well-formed cache still reads") {
  auto tree = RepoTree::from_cache_json(
      kCommit, std::string(R"({"format_version": 1, "files": {"b": {"size": 3, "blob_id": ")") + kCommit +
                   R"("}, "a": {"size": 0, "blob_id": ")" + kCommit + R"("}}})");
  REQUIRE(tree);
  REQUIRE(tree->files.size() == 2);
  CHECK(tree->files[0].path == "a");
  CHECK(tree->files[1].size == 3);
}

TEST_CASE("the curl transport refuses non-HTTP URLs (a hostile Location cannot read local files)") {
  auto transport = make_curl_transport();
  for (const char* url : {"file:///etc/hostname", "ftp://127.0.0.1:1/x", "dict://127.0.0.1:1/x"}) {
    INFO(url);
    Request request;
    request.url = url;
    StringSink sink;
    auto response = transport->perform(request, sink);
    REQUIRE_FALSE(response);
    CHECK(response.error().code == ErrorCode::kNetwork);
    CHECK(sink.body().empty());
  }
}

TEST_CASE("Hub answers: wrong types, missing fields and unsafe paths are kCorruptFile, not an exception") {
  const std::string sha1 = "0123456789abcdef0123456789abcdef01234567";
  const std::string sha256(64, 'a');
  auto entry = [&](const std::string& fields) { return "[{\"type\": \"file\", " + fields + "}]"; };
  for (const std::string& page : {
           std::string("{}"),
           std::string("[1]"),
           entry(R"("path": 7, "oid": ")" + sha1 + R"(", "size": 1)"),
           entry(R"("path": "a", "oid": 7, "size": 1)"),
           entry(R"("path": "a", "oid": ")" + sha1 + R"(", "size": "12")"),
           entry(R"("path": "a", "oid": ")" + sha1 + R"(", "size": -1)"),
           entry(R"("path": "../a", "oid": ")" + sha1 + R"(", "size": 1)"),
           entry(R"("path": "a", "oid": ")" + sha1 + R"(", "size": 1, "lfs": 5)"),
           entry(R"("path": "a", "oid": ")" + sha1 + R"(", "size": 1, "lfs": {"oid": "xyz"})"),
           std::string(R"([{"type": 5}])"),
           std::string(100000, '[') + std::string(100000, ']'),
       }) {
    INFO(page.substr(0, 200));
    auto files = parse_tree_page(page);
    REQUIRE_FALSE(files);
    CHECK(files.error().code == ErrorCode::kCorruptFile);
  }
  auto good = parse_tree_page(R"([{"type": "directory", "path": "build", "oid": ")" + sha1 + R"(", "size": 0},
      {"type": "file", "path": "build/a.so", "oid": ")" +
                              sha1 + R"(", "size": 3,
       "lfs": {"oid": ")" + sha256 +
                              R"(", "size": 9, "pointerSize": 130}, "xetHash": "not-hex"}])");
  REQUIRE(good);
  REQUIRE(good->size() == 1);
  CHECK((*good)[0].path == "build/a.so");
  CHECK((*good)[0].size == 9);
  CHECK((*good)[0].lfs_sha256 == sha256);
  CHECK_FALSE((*good)[0].xet_hash);

  // Note [Unsafe paths in a listing]: with somewhere to put them, files whose path cannot be stored
  // safely are set apart, named as listed, and the page is read on; without, they fail it.
  const std::string mixed = R"([{"type": "file", "path": "docs\\notes.md", "oid": ")" + sha1 +
                            R"(", "size": 4}, {"type": "file", "path": "build/a.so", "oid": ")" + sha1 +
                            R"(", "size": 3}, {"type": "file", "path": "build/x/\u001b[31m.py", "oid": ")" + sha1 +
                            R"(", "size": 2}])";
  std::vector<TreeEntry> unsafe;
  auto split = parse_tree_page(mixed, &unsafe);
  REQUIRE(split);
  REQUIRE(split->size() == 1);
  CHECK((*split)[0].path == "build/a.so");
  REQUIRE(unsafe.size() == 2);
  CHECK(unsafe[0].path == "docs\\notes.md");
  CHECK(unsafe[0].size == 4);
  CHECK(unsafe[1].path == "build/x/\x1b[31m.py");
  auto refused = parse_tree_page(mixed);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == ErrorCode::kCorruptFile);
  CHECK_THAT(refused.error().message, Catch::Contains("backslash"));

  for (const char* refs : {R"({"branches": [1]})", R"({"branches": [{"name": 5}]})",
                           R"({"branches": [{"name": "v1", "targetCommit": 5}]})", R"({"branches": {}})"}) {
    INFO(refs);
    auto branches = parse_refs_answer(refs);
    REQUIRE_FALSE(branches);
    CHECK(branches.error().code == ErrorCode::kCorruptFile);
  }
  for (const char* revision : {R"({"sha": 5})", R"({"sha": "abc"})", R"([])"}) {
    INFO(revision);
    CHECK_FALSE(parse_revision_answer(revision));
  }
  CHECK_FALSE(parse_overview_answer(R"({"trustedKernelPublisher": "yes"})"));
  CHECK(parse_overview_answer(R"({"trustedKernelPublisher": true})").value());
  CHECK_FALSE(parse_overview_answer(R"({})").value());
}

TEST_CASE("a listing's unsafe paths survive the tree cache, and refuse only a download that includes them") {
  const std::string sha1 = "0123456789abcdef0123456789abcdef01234567";
  RepoTree tree;
  tree.commit = std::string(40, 'c');
  tree.files = {{"build/torch-cpu/a.py", 3, sha1, {}, {}}, {"build/torch-cpu/b.so", 9, sha1, std::string(64, 'b'), {}}};
  tree.unsafe = {{"build/torch-cuda/..\\evil.py", 5, sha1, {}, {}}, {"docs\\notes.md", 4, sha1, {}, {}}};

  auto again = RepoTree::from_cache_json(tree.commit, tree.to_cache_json());
  REQUIRE(again);
  REQUIRE(again->files.size() == 2);
  CHECK(again->files[1].lfs_sha256 == std::string(64, 'b'));
  REQUIRE(again->unsafe.size() == 2);
  CHECK(again->unsafe[0].path == "build/torch-cuda/..\\evil.py");
  CHECK(again->unsafe[1].path == "docs\\notes.md");
  CHECK(again->subfolders("build") == std::vector<std::string>{"torch-cpu"});

  // The CPU variant holds no unsafe file, whatever lies beside it; the CUDA one does, and so does
  // the whole repo.
  CHECK(again->check_no_unsafe_path({"build/torch-cpu/"}, {"build/torch-cpu.kernelhub.sig"}));
  const auto cuda = again->check_no_unsafe_path({"build/torch-cuda/"}, {});
  REQUIRE_FALSE(cuda);
  CHECK(cuda.error().code == ErrorCode::kCorruptFile);
  CHECK_THAT(cuda.error().message, Catch::Contains("build/torch-cuda/..\\evil.py") && Catch::Contains("backslash"));
  CHECK_FALSE(again->check_no_unsafe_path({}, {}));
  CHECK_FALSE(again->check_no_unsafe_path({"build/torch-cpu/"}, {"docs\\notes.md"}));
}
