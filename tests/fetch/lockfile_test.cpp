#include "kernelhub/fetch/internal/lockfile.hpp"

#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>

#include "kernelhub/base/internal/json_nesting.hpp"
#include "kernels_words.hpp"
#include "support/temp_dir.hpp"

namespace kernelhub {
namespace {

const std::string kCommit(40, 'a');

using testing::TempDir;

void write_in(const std::filesystem::path& dir, const std::string& name, const std::string& text) {
  std::filesystem::create_directories((dir / name).parent_path());
  std::ofstream(dir / name, std::ios::binary) << text;
}

TEST_CASE("both kernels lock formats are read, and written back identically") {
  const std::string current = R"([
  {
    "dependency": {
      "repo-id": "acme/x",
      "version": 1
    },
    "lock": {
      "commit": ")" + kCommit +
                              R"("
    }
  },
  {
    "dependency": {
      "repo-id": "acme/y",
      "revision": "main"
    },
    "lock": {
      "commit": ")" + std::string(40, 'b') +
                              R"("
    }
  }
]
)";
  const auto lock = LockFile::parse(current, "kernels.lock").value();
  REQUIRE(lock.locks.size() == 2);
  CHECK(lock.find("acme/x")->dependency.version == std::optional<int>(1));
  CHECK(lock.find("acme/y")->dependency.revision == std::optional<std::string>("main"));
  CHECK(lock.find("acme/y")->dependency.wanted() == "main");
  CHECK(lock.find("acme/z") == nullptr);
  CHECK(lock.to_json(LockFormat::kKernels) == current);

  const std::string legacy = R"([{"repo_id": "acme/x", "sha": ")" + kCommit +
                             R"(", "variants": {"torch215-cxx11-cpu-x86_64-linux": {"hash": "sha256-)" +
                             std::string(64, 'c') + R"(", "hash_type": "git_lfs_concat"}}}])";
  const auto old = LockFile::parse(legacy, "kernels.lock").value();
  CHECK(old.locks.at(0).commit == kCommit);
  CHECK(old.locks.at(0).variants.at("torch215-cxx11-cpu-x86_64-linux") == "sha256-" + std::string(64, 'c'));
  CHECK(LockFile::parse(old.to_json(LockFormat::kLegacy), "again").value().locks.at(0).variants ==
        old.locks.at(0).variants);
}

TEST_CASE("a repo the lock file does not list is a typed not-found, in either wording") {
  const std::string json =
      R"([{"dependency": {"repo-id": "acme/x", "version": 1}, "lock": {"commit": ")" + kCommit + R"("}}])";
  const auto lock = LockFile::parse(json, "kernels.lock").value();
  CHECK(lock.lock_of("acme/x", "kernels.lock").value().commit == kCommit);
  const auto ours = lock.lock_of("acme/y", "/p/kernels.lock");
  REQUIRE_FALSE(ours.has_value());
  CHECK(ours.error().code == ErrorCode::kNotFound);
  CHECK(ours.error().missing == Missing::kLock);
  CHECK_THAT(ours.error().message, Catch::Contains("/p/kernels.lock") && Catch::Contains("kernelhub lock"));
  // kernels/locking.py `_get_locked_kernel_revision`, word for word.
  CHECK(kernels_words::message(ours.error()) ==
        "Kernel `acme/y` is not locked. Please lock it with `kernels lock <project>` and then reinstall the project.");
}

TEST_CASE("malformed lock files are kCorruptFile naming the entry and the problem") {
  const std::string hash = "sha256-" + std::string(64, 'c');
  struct Case {
    std::string json;
    const char* why;
  };
  const std::vector<Case> cases = {
      {"{}", "not a JSON list"},
      {"[1]", "entry 1: not an object"},
      {R"([{"dependency": {"repo-id": "acme/x", "version": 1}, "lock": {"commit": ")" + kCommit + R"(", "x": 1}}])",
       "unknown field `x`"},
      {R"([{"dependency": {"repo-id": "acme/x"}, "lock": {"commit": ")" + kCommit + R"("}}])", "exactly one of"},
      {R"([{"dependency": {"repo-id": "acme/x", "version": -1}, "lock": {"commit": ")" + kCommit + R"("}}])",
       "non-negative integer"},
      {R"([{"dependency": {"repo-id": "acme/x", "version": 1}, "lock": {"commit": "ABC"}}])",
       "not a git object id (40 or 64 hex digits)"},
      {R"([{"dependency": {"repo-id": "acme/x", "version": 1, "version": 2}, "lock": {"commit": ")" + kCommit +
           R"("}}])",
       "entry 1: field `version` is given twice"},
      {"\xEF\xBB\xBF[]", "byte order mark"},
      {R"([{"repo_id": "acme/x", "sha": ")" + kCommit + R"(", "variants": {"v": {"hash": "md5-1"}}}])",
       "not sha256-<64 hex>"},
      {R"([{"repo_id": "acme/x", "sha": ")" + kCommit + R"(", "variants": {"v": {"hash": ")" + hash +
           R"(", "hash_type": "nar"}}}])",
       "only \"git_lfs_concat\""},
      {R"([{"repo_id": "acme/x", "sha": ")" + kCommit + R"(", "variants": {}}, {"repo_id": "acme/x", "sha": ")" +
           kCommit + R"(", "variants": {}}])",
       "locked twice"},
      {std::string(100000, '[') + std::string(100000, ']'), "not a JSON list"},  // refused before recursion
  };
  for (const auto& [json, why] : cases) {
    INFO(json.substr(0, 200));
    const auto lock = LockFile::parse(json, "kernels.lock");
    REQUIRE_FALSE(lock.has_value());
    CHECK(lock.error().code == ErrorCode::kCorruptFile);
    CHECK_THAT(lock.error().message, Catch::Contains(why) && Catch::Contains("kernels.lock"));
  }
}

TEST_CASE("json_nesting_within counts brackets outside strings only") {
  CHECK(json_nesting_within(R"({"a": [1, {"b": 2}]})", 3));
  CHECK_FALSE(json_nesting_within(R"({"a": [1, {"b": 2}]})", 2));
  CHECK(json_nesting_within(R"(["[[[[\"[[["])", 1));
}

TEST_CASE("the git_lfs_concat hash follows the kernels <= 0.16 algorithm") {
  client::RepoTree tree;
  tree.commit = kCommit;
  const std::string v = "build/torch215-cxx11-cpu-x86_64-linux/";
  tree.files = {
      {"README.md", 1, std::string(40, 'd'), std::nullopt, std::nullopt},
      {v + "__init__.py", 1, std::string(40, 'a'), std::nullopt, std::nullopt},
      {v + "__pycache__/x.cpython-311.pyc", 1, std::string(40, 'e'), std::nullopt, std::nullopt},
      {v + "_ops.so", 1, std::string(40, 'f'), std::string(64, 'b'), std::nullopt},
      {v + "sub/z.py", 1, std::string(40, 'c'), std::nullopt, std::nullopt},
      {"build/tvm-ffi01-cpu-x86_64-linux/x.so", 1, std::string(40, 'a'), std::nullopt, std::nullopt},
      {"build/README.md", 1, std::string(40, 'd'), std::nullopt, std::nullopt},
  };
  const auto hashes = variant_lock_hashes(tree);
  // Every variant under build/, whatever its kind; neither README is one.
  REQUIRE(hashes.size() == 2);
  // hashlib over sorted (path bytes, digest bytes): README and bytecode left out.
  CHECK(hashes.at("torch215-cxx11-cpu-x86_64-linux") ==
        "sha256-20c1b89cfdad132f0eeb3a22e02cd8a4cfaca8267a3a8c5c94964b00fea8ee52");
  // hashlib.sha256(b"x.so" + bytes.fromhex("a" * 40)).hexdigest()
  CHECK(hashes.at("tvm-ffi01-cpu-x86_64-linux") ==
        "sha256-4c97de13e930706884583d21f6389c1493e9b4c00aeb8877f3e8c8571980627e");
}

TEST_CASE("lock files read as kernels 0.19.1 reads them, but where verdicts.json says why not") {
  // The table tests/python/test_lockfile_verdicts.py holds kernels 0.19.1 to.
  std::ifstream in(std::string(KERNELHUB_SOURCE_DIR) + "/tests/fixtures/lock_files/verdicts.json", std::ios::binary);
  const auto table = nlohmann::json::parse(in);
  const std::string repo = table.at("repo");
  REQUIRE(table.at("cases").size() > 40);
  for (const auto& c : table.at("cases")) {
    const std::string text = c.contains("document") ? c["document"].dump() : c["text"].get<std::string>();
    INFO(c["name"].get<std::string>() << ": " << text);
    const auto lock = LockFile::parse(text, "kernels.lock");
    if (c["kernelhub"] == "refuses") {
      REQUIRE_FALSE(lock.has_value());
      CHECK(lock.error().code == ErrorCode::kCorruptFile);
      CHECK_THAT(lock.error().message, Catch::Contains("kernels.lock"));
      continue;
    }
    REQUIRE(lock.has_value());
    const KernelLock* found = lock->find(repo);
    if (c["commit"].is_null()) {
      CHECK(found == nullptr);
    } else {
      REQUIRE(found != nullptr);
      CHECK(found->commit == c["commit"].get<std::string>());
    }
    // Where kernels differs, the table says why.
    if (c["kernels"] != c["kernelhub"]) CHECK_FALSE(c.value("why", std::string()).empty());
  }
}

TEST_CASE("kernelhub.lock beside kernels.lock supplies the hashes, and must lock the same commit") {
  TempDir dir;
  const std::string current =
      R"([{"dependency": {"repo-id": "acme/x", "version": 1}, "lock": {"commit": ")" + kCommit + R"("}}])";
  write_in(dir.path(), "kernels.lock", current);
  CHECK(LockFile::read(dir.path() / "kernels.lock").value().locks.at(0).variants.empty());

  const std::string hash = "sha256-" + std::string(64, 'c');
  write_in(dir.path(), "kernelhub.lock",
           R"([{"repo_id": "acme/x", "sha": ")" + kCommit + R"(", "variants": {"v": {"hash": ")" + hash + R"("}}}])");
  CHECK(LockFile::read(dir.path() / "kernels.lock").value().locks.at(0).variants.at("v") == hash);

  write_in(dir.path(), "kernelhub.lock",
           R"([{"repo_id": "acme/x", "sha": ")" + std::string(40, 'b') + R"(", "variants": {}}])");
  const auto stale = LockFile::read(dir.path() / "kernels.lock");
  REQUIRE_FALSE(stale.has_value());
  CHECK_THAT(stale.error().message, Catch::Contains("written apart"));

  const auto missing = LockFile::read(dir.path() / "nope.lock");
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().code == ErrorCode::kNotFound);
}

TEST_CASE("dependency lists: the table only, quoted repo ids, versions or revisions, errors with their line") {
  TempDir dir;
  write_in(dir.path(), "pyproject.toml", R"([project]
name = "demo"
description = """
[tool.kernels.dependencies]
"evil/x" = 9
"""

[tool.kernels.dependencies]
"acme/x" = 1   # a comment
'acme/y' = "main"

[tool.other]
"acme/z" = 3
)");
  const auto deps = read_dependencies(dir.path() / "pyproject.toml").value();
  REQUIRE(deps.size() == 2);
  CHECK(deps[0].repo_id == "acme/x");
  CHECK(deps[0].version == std::optional<int>(1));
  CHECK(deps[1].repo_id == "acme/y");
  CHECK(deps[1].revision == std::optional<std::string>("main"));
  CHECK(find_dependency_file(dir.path()).value() == dir.path() / "pyproject.toml");

  struct Case {
    const char* text;
    const char* why;
  };
  for (auto [text, why] :
       {Case{"[dependencies]\nacme/x = 1\n", "line 2: expected a quoted repo id"},
        Case{"[dependencies]\n\"acme/x\" 1\n", "expected `=`"},
        Case{"[dependencies]\n\"acme/x\" = 1.5\n", "major version number"},
        Case{"[dependencies]\n\"../x\" = 1\n", "not a repo id"},
        Case{"[dependencies]\n\"acme/x\" = 1\n\"acme/x\" = 2\n", "line 3: \"acme/x\" is listed twice"},
        Case{"[dependencies]\n\"acme/x\" = { version = 1 }\n", "major version number"},
        // Full TOML: a syntax error anywhere is one, with its line and column.
        Case{"[project]\nname = \"x\n[dependencies]\n", "not valid TOML, line 2, column"},
        Case{"[dependencies]\n\"acme/x\" = -1\n", "line 2: the version of \"acme/x\" must be a major version number"},
        Case{"[dependencies]\n\"acme/x\" = \"\"\n", "line 2: the revision of \"acme/x\" is empty"},
        Case{"[dependencies]\nacme = 1\n", "line 2: expected a quoted repo id"},
        Case{"dependencies = 3\n", "must be a table"}}) {
    INFO(text);
    write_in(dir.path(), "kernels.toml", text);
    const auto bad = read_dependencies(dir.path() / "kernels.toml");
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().code == ErrorCode::kInvalidArgument);
    CHECK_THAT(bad.error().message, Catch::Contains(why));
  }
  write_in(dir.path(), "kernels.toml", "[other]\n");
  CHECK(read_dependencies(dir.path() / "kernels.toml").error().code == ErrorCode::kNotFound);
}

TEST_CASE("dependency lists are full TOML: any spelling of the table, in the order written") {
  TempDir dir;
  write_in(dir.path(), "pyproject.toml", R"([tool.kernels]
dependencies = { "acme/zeta" = 2, 'acme/alpha' = """v1""" }
)");
  auto deps = read_dependencies(dir.path() / "pyproject.toml").value();
  REQUIRE(deps.size() == 2);
  CHECK(deps[0].repo_id == "acme/zeta");  // as written, not sorted
  CHECK(deps[0].version == std::optional<int>(2));
  CHECK(deps[1].revision == std::optional<std::string>("v1"));

  write_in(dir.path(), "kernels.toml", "dependencies.\"acme/x\" = 0x10 # a hex version is a version\n");
  deps = read_dependencies(dir.path() / "kernels.toml").value();
  REQUIRE(deps.size() == 1);
  CHECK(deps[0].version == std::optional<int>(16));
}

}  // namespace
}  // namespace kernelhub
