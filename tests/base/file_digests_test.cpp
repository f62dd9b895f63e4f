#include "kernelhub/base/file_digests.hpp"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>

namespace kernelhub {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("kh_digests_" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

void write(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

TEST_CASE("FileDigests reads a file once, also through another path to it, and equals sha256_file") {
  TempDir dir;
  const fs::path file = dir.path / "lib.so";
  const std::string bytes(2 * (1 << 20) + 5, 'k');
  write(file, bytes);
  fs::create_symlink(file, dir.path / "link.so");  // a cache snapshot links to its blob
  fs::create_directories(dir.path / "sub");

  FileDigests digests;
  const auto first = digests.sha256(file);
  REQUIRE(first.has_value());
  CHECK(*first == sha256(bytes));
  CHECK(digests.bytes_read() == bytes.size());

  const auto again = digests.sha256(dir.path / "sub" / ".." / "lib.so");
  const auto linked = sha256_file(dir.path / "link.so", &digests);
  REQUIRE(again.has_value());
  REQUIRE(linked.has_value());
  CHECK(*again == *first);
  CHECK(*linked == *first);
  CHECK(digests.bytes_read() == bytes.size());  // not read again

  // hash(): the remembered digest with the bytes it covers.
  const auto hash = hash_file(dir.path / "link.so", &digests);
  REQUIRE(hash.has_value());
  CHECK(hash->digest == *first);
  CHECK(hash->size == bytes.size());
  CHECK(digests.bytes_read() == bytes.size());
}

TEST_CASE("FileDigests reads a file again once its size or modification time changed") {
  TempDir dir;
  const fs::path file = dir.path / "lib.so";
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
  write(dir.path / "a", "abc");
  const auto direct = sha256_file(dir.path / "a", nullptr);
  REQUIRE(direct.has_value());
  CHECK(to_hex(*direct) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

}  // namespace
}  // namespace kernelhub
