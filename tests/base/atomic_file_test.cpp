#include "kernelhub/base/internal/atomic_file.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>

#include "kernelhub/base/internal/hex.hpp"
#include "kernelhub/base/internal/random_name.hpp"
#include "kernelhub/base/internal/read_file.hpp"
#include "support/temp_dir.hpp"

namespace kernelhub {
namespace {

namespace fs = std::filesystem;

using testing::TempDir;

// The names of everything below `dir`, sorted: to see that no temp file is left.
std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) out.push_back(entry.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

TEST_CASE("write_file_atomic creates folders, replaces the old content and leaves no temp file") {
  TempDir dir;
  const fs::path target = dir.path() / "refs" / "main";
  REQUIRE(write_file_atomic(target, "first"));
  REQUIRE(write_file_atomic(target, "second", {.durability = Durability::kData}));
  CHECK(read_file(target).value() == "second");
  CHECK(names_in(dir.path()) == std::vector<std::string>{"main", "refs"});

  // Staged in a folder of its own (the server's tmp/), made durable, with the mode asked for.
  fs::create_directories(dir.path() / "tmp");
  REQUIRE(write_file_atomic(dir.path() / "secret", "s",
                            {.durability = Durability::kFull, .staging_dir = dir.path() / "tmp", .mode = 0600}));
  CHECK(read_file(dir.path() / "secret").value() == "s");
  CHECK((fs::status(dir.path() / "secret").permissions() & fs::perms::group_all) == fs::perms::none);
  CHECK(fs::is_empty(dir.path() / "tmp"));
}

TEST_CASE("a failed atomic write leaves nothing behind") {
  TempDir dir;
  const auto missing_stage = write_file_atomic(dir.path() / "x", "x", {.staging_dir = dir.path() / "no-such-dir"});
  REQUIRE_FALSE(missing_stage);
  CHECK(missing_stage.error().code == ErrorCode::kNotFound);
  CHECK_THAT(missing_stage.error().message, Catch::Contains("no-such-dir"));

  // The rename fails (the target is a non-empty folder): the temp file is removed, the folder kept.
  fs::create_directories(dir.path() / "busy" / "inside");
  const auto onto_folder = write_file_atomic(dir.path() / "busy", "x");
  REQUIRE_FALSE(onto_folder);
  CHECK_THAT(onto_folder.error().message, Catch::Contains("cannot rename"));
  CHECK(names_in(dir.path()) == std::vector<std::string>{"busy", "inside"});
}

TEST_CASE("a TempFile not committed is removed; a committed one is its target") {
  TempDir dir;
  fs::path staged;
  {
    auto temp = TempFile::create_beside(dir.path() / "file");
    REQUIRE(temp);
    staged = temp->path();
    CHECK(staged.filename().string().starts_with("file."));
    CHECK(staged.extension() == ".tmp");
    REQUIRE(temp->write("partial"));
    CHECK(fs::exists(staged));
  }
  CHECK_FALSE(fs::exists(staged));

  auto temp = TempFile::create_in(dir.path());
  REQUIRE(temp);
  CHECK(temp->path().filename().string().size() == 4 + 24);  // tmp- and 12 random bytes
  REQUIRE(temp->write("whole"));
  REQUIRE(temp->commit_to(dir.path() / "file", Durability::kFull));
  CHECK(read_file(dir.path() / "file").value() == "whole");
  CHECK(names_in(dir.path()) == std::vector<std::string>{"file"});
}

TEST_CASE("random_hex: lower-case hex of the length asked, different every time") {
  const std::string a = random_hex(16), b = random_hex(16);
  CHECK(is_lower_hex(a, 32));
  CHECK(a != b);
  CHECK(random_hex(0).empty());
}

TEST_CASE("read_file reads bytes as they are; a missing file is kNotFound naming it") {
  TempDir dir;
  const std::string bytes("a\0b\r\n", 5);
  std::ofstream(dir.path() / "f", std::ios::binary) << bytes;
  CHECK(read_file(dir.path() / "f").value() == bytes);
  const auto missing = read_file(dir.path() / "none");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == ErrorCode::kNotFound);
  CHECK_THAT(missing.error().message, Catch::Contains("none"));
}

}  // namespace
}  // namespace kernelhub
