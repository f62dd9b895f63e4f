#include "kernelhub/base/internal/file_digests.hpp"

#include "kernelhub/base/internal/git_blob_sha1.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>

namespace kernelhub {
namespace {

namespace fs = std::filesystem;

using testing::TempDir;

void write(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

TEST_CASE("FileDigests reads a file once, also through another path to it, and equals sha256_file") {
  TempDir dir;
  const fs::path file = dir.path() / "lib.so";
  const std::string bytes(2 * (1 << 20) + 5, 'k');
  write(file, bytes);
  fs::create_symlink(file, dir.path() / "link.so");  // a cache snapshot links to its blob
  fs::create_directories(dir.path() / "sub");

  FileDigests digests;
  const auto first = digests.sha256(file);
  REQUIRE(first.has_value());
  CHECK(*first == sha256(bytes));
  CHECK(digests.bytes_read() == bytes.size());

  const auto again = digests.sha256(dir.path() / "sub" / ".." / "lib.so");
  const auto linked = sha256_file(dir.path() / "link.so", &digests);
  REQUIRE(again.has_value());
  REQUIRE(linked.has_value());
  CHECK(*again == *first);
  CHECK(*linked == *first);
  CHECK(digests.bytes_read() == bytes.size());  // not read again

  // hash(): the remembered digest with the bytes it covers.
  const auto hash = hash_file(dir.path() / "link.so", &digests);
  REQUIRE(hash.has_value());
  CHECK(hash->digest == *first);
  CHECK(hash->size == bytes.size());
  CHECK(digests.bytes_read() == bytes.size());
}

TEST_CASE("FileDigests gives a small file's git blob sha1 from the read that gave its sha256") {
  TempDir dir;
  const fs::path small = dir.path() / "__init__.py";
  write(small, "hello\n");
  FileDigests digests;
  REQUIRE(digests.sha256(small).has_value());
  const auto sha1 = digests.git_sha1(small);
  REQUIRE(sha1.has_value());
  CHECK(*sha1 == "ce013625030ba8dba906f756967f9e9ca394464a");  // `git hash-object`
  CHECK(digests.bytes_read() == 6);                            // one read served both

  // Asked for the sha1 first, the sha256 comes from the same read.
  const fs::path other = dir.path() / "metadata.json";
  write(other, "{}");
  FileDigests fresh;
  REQUIRE(fresh.git_sha1(other).has_value());
  CHECK(*fresh.sha256(other) == sha256("{}"));
  CHECK(fresh.bytes_read() == 2);
}

TEST_CASE("FileDigests reads a file above the git blob limit again only when its git sha1 is asked for") {
  TempDir dir;
  const fs::path large = dir.path() / "lib.so";
  const std::string bytes(FileDigests::kGitBlobLimit + 1, 'x');
  write(large, bytes);
  FileDigests digests;
  REQUIRE(digests.sha256(large).has_value());
  CHECK(digests.hash(large)->git_sha1.empty());  // an LFS file's etag is its sha256
  const auto sha1 = digests.git_sha1(large);
  REQUIRE(sha1.has_value());
  CHECK(*sha1 == *git_blob_sha1_file(large));
  CHECK(digests.bytes_read() == 2 * bytes.size());
  REQUIRE(digests.git_sha1(large).has_value());
  CHECK(digests.bytes_read() == 2 * bytes.size());  // kept since
}

TEST_CASE("FileDigests reads a file again once its size or modification time changed") {
  TempDir dir;
  const fs::path file = dir.path() / "lib.so";
  write(file, "original bytes");
  FileDigests digests;
  REQUIRE(digests.sha256(file).has_value());

  write(file, "tampered bytes, longer");
  const auto resized = digests.sha256(file);
  REQUIRE(resized.has_value());
  CHECK(*resized == sha256("tampered bytes, longer"));

  // Same size, new content: the modification time tells.
  write(file, "tampered bytes, LONGER");
  fs::last_write_time(file, fs::last_write_time(file) + std::chrono::seconds(5));
  const auto rewritten = digests.sha256(file);
  REQUIRE(rewritten.has_value());
  CHECK(*rewritten == sha256("tampered bytes, LONGER"));
  CHECK(digests.bytes_read() == 14 + 22 + 22);
}

TEST_CASE("FileDigests on a missing file is kNotFound naming it, and sha256_file without one reads directly") {
  FileDigests digests;
  const auto missing = digests.sha256("/nonexistent/kh/lib.so");
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().code == ErrorCode::kNotFound);
  CHECK_THAT(missing.error().message, Catch::Contains("/nonexistent/kh/lib.so"));
  CHECK(digests.bytes_read() == 0);

  TempDir dir;
  write(dir.path() / "a", "abc");
  const auto direct = sha256_file(dir.path() / "a", nullptr);
  REQUIRE(direct.has_value());
  CHECK(to_hex(*direct) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

}  // namespace
}  // namespace kernelhub
