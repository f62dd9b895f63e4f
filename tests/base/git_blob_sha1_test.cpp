#include "kernelhub/base/internal/git_blob_sha1.hpp"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>

namespace kernelhub {
namespace {

TEST_CASE("git blob sha1 matches git hash-object") {
  CHECK(git_blob_sha1("") == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
  CHECK(git_blob_sha1("hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a");
  GitBlobSha1 streamed(6);
  streamed.update("hel", 3);
  streamed.update("lo\n", 3);
  CHECK(streamed.finish_hex() == "ce013625030ba8dba906f756967f9e9ca394464a");
}

TEST_CASE("sha1 matches the FIPS 180-1 test vector") {
  CHECK(sha1_hex("abc") == "a9993e364706816aba3e25717850c26c9cd0d89d");
  Sha1 streamed;
  streamed.update("a");
  streamed.update("bc");
  CHECK(streamed.finish_hex() == "a9993e364706816aba3e25717850c26c9cd0d89d");
}

TEST_CASE("git_blob_sha1_file streams a file larger than its buffer; a missing file is kNotFound") {
  const auto path = std::filesystem::temp_directory_path() / ("kh_git_sha1_" + std::to_string(::getpid()));
  std::string data(2 * (1 << 20) + 5, '\0');
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>((i * 131) & 0xff);
  std::ofstream(path, std::ios::binary).write(data.data(), static_cast<std::streamsize>(data.size()));
  const auto id = git_blob_sha1_file(path);
  std::filesystem::remove(path);
  REQUIRE(id.has_value());
  CHECK(*id == git_blob_sha1(data));

  const auto missing = git_blob_sha1_file("/nonexistent/kh");
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().code == ErrorCode::kNotFound);
  CHECK_THAT(missing.error().message, Catch::Contains("/nonexistent/kh"));
}

}  // namespace
}  // namespace kernelhub
