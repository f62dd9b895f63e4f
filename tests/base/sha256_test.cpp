#include "kernelhub/base/internal/sha256.hpp"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>

#include "kernelhub/base/internal/base64.hpp"

namespace kernelhub {
namespace {

TEST_CASE("sha256 matches the FIPS 180-2 test vectors") {
  CHECK(to_hex(sha256("")) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(to_hex(sha256("abc")) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(base64_encode(sha256("hello\n")) == "WJG1tSLV3whtD/CxEPvZ0hu0/HFjrzTQgoai6Eb2vgM=");
}

TEST_CASE("sha256_file streams a file larger than its buffer and equals the in-memory hash") {
  const auto path = std::filesystem::temp_directory_path() / ("kh_sha_" + std::to_string(::getpid()));
  std::string data(3 * (1 << 20) + 17, '\0');
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>((i * 7919) & 0xff);
  std::ofstream(path, std::ios::binary).write(data.data(), static_cast<std::streamsize>(data.size()));
  const auto digest = sha256_file(path);
  const auto hash = hash_file(path);
  std::filesystem::remove(path);
  REQUIRE(digest.has_value());
  CHECK(*digest == sha256(data));
  // hash_file: the same digest and the bytes it covers, counted while reading.
  REQUIRE(hash.has_value());
  CHECK(hash->digest == *digest);
  CHECK(hash->size == data.size());
}

TEST_CASE("sha256_file on a missing file is kNotFound naming the file") {
  const auto digest = sha256_file("/nonexistent/kh");
  REQUIRE_FALSE(digest.has_value());
  CHECK(digest.error().code == ErrorCode::kNotFound);
  CHECK_THAT(digest.error().message, Catch::Contains("/nonexistent/kh"));
}

}  // namespace
}  // namespace kernelhub
