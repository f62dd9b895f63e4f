#include "kernelhub/base/internal/zip_archive.hpp"

#include <catch2/catch.hpp>
#include <fstream>

#include "kernelhub/base/internal/crc32.hpp"
#include "kernelhub/base/internal/zip_writer.hpp"
#include "support/temp_dir.hpp"

namespace kernelhub {
namespace {

namespace fs = std::filesystem;

std::string make_zip(std::vector<ZipInput> members) {
  return write_zip(std::move(members)).value();
}

std::string package() {
  return make_zip({{"layers.py", "class RMSNorm: pass\n"},
                   {"__init__.py", "from ._ops import ops\n"},
                   {"sub/data.json", "{}"},
                   {"_ops.py", "ops = None\n"}});
}

fs::path write(const testing::TempDir& temp, const std::string& bytes, const std::string& name = "p.zip") {
  const fs::path path = temp.path() / name;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  return path;
}

std::uint32_t u32_at(const std::string& b, std::size_t at) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<std::uint8_t>(b[at + static_cast<std::size_t>(i)]);
  return v;
}

void put32_at(std::string& b, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + static_cast<std::size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xFF);
}

// Where the central directory starts (from the end record, the last 22 bytes of an archive
// without a comment) and where its n-th entry starts.
std::size_t central_entry(const std::string& zip, int n) {
  std::size_t at = u32_at(zip, zip.size() - 22 + 16);
  for (int i = 0; i < n; ++i) {
    const auto names = static_cast<std::uint8_t>(zip[at + 28]) | static_cast<std::uint8_t>(zip[at + 29]) << 8;
    at += 46 + static_cast<std::size_t>(names);
  }
  return at;
}

Error read_error(const testing::TempDir& temp, const std::string& bytes) {
  auto read = ZipArchive::read(write(temp, bytes, "bad.zip"));
  REQUIRE_FALSE(read.has_value());
  CHECK(read.error().code == ErrorCode::kCorruptFile);
  return read.error();
}

TEST_CASE("crc32 is the ZIP checksum and continues across pieces") {
  CHECK(crc32("123456789") == 0xCBF43926u);  // the check value of CRC-32/ISO-HDLC
  CHECK(crc32("") == 0u);
  CHECK(crc32("6789", crc32("12345")) == 0xCBF43926u);
}

TEST_CASE("write_zip makes the same bytes from the same files, in any order, and reads back") {
  const std::string zip = package();
  CHECK(make_zip({{"_ops.py", "ops = None\n"},
                  {"sub/data.json", "{}"},
                  {"__init__.py", "from ._ops import ops\n"},
                  {"layers.py", "class RMSNorm: pass\n"}}) == zip);
  testing::TempDir temp;
  auto archive = ZipArchive::read(write(temp, zip));
  REQUIRE(archive.has_value());
  REQUIRE(archive->members().size() == 4);
  std::vector<std::string> names;
  for (const auto& m : archive->members()) {
    names.push_back(m.name);
    CHECK(m.method == 0);
    CHECK(m.unix_mode == 0100644);
    CHECK_FALSE(m.is_symlink());
    CHECK(m.compressed_size == m.size);
  }
  CHECK(names == std::vector<std::string>{"__init__.py", "_ops.py", "layers.py", "sub/data.json"});
  CHECK(archive->members()[0].crc32 == crc32("from ._ops import ops\n"));
  CHECK(archive->members()[0].size == 22);
  CHECK(archive->file_size() == zip.size());
}

TEST_CASE("write_zip refuses names a ZIP cannot hold") {
  CHECK(write_zip({{"", "x"}}).error().code == ErrorCode::kInvalidArgument);
  CHECK(write_zip({{"a.py", "x"}, {"a.py", "y"}}).error().code == ErrorCode::kInvalidArgument);
  CHECK(write_zip({{std::string(70000, 'a'), "x"}}).error().code == ErrorCode::kInvalidArgument);
  CHECK(write_zip({}).has_value());  // an empty archive is 22 bytes
}

TEST_CASE("an archive cut anywhere, or with bytes after it, is refused as cut or damaged") {
  testing::TempDir temp;
  const std::string zip = package();
  for (std::size_t size = 0; size < zip.size(); ++size) {
    INFO("cut to " << size << " of " << zip.size() << " bytes");
    const Error e = read_error(temp, zip.substr(0, size));
    CHECK_THAT(e.message, Catch::Contains("bad.zip") && Catch::Contains("cut short or damaged"));
  }
  CHECK_THAT(read_error(temp, zip + "trailing").message, Catch::Contains("no end-of-central-directory record"));
  CHECK_THAT(read_error(temp, "PK\x05\x06").message, Catch::Contains("shorter than an empty archive"));
}

TEST_CASE("doctored archives are refused, each saying what is wrong") {
  testing::TempDir temp;
  const std::string zip = package();
  SECTION("a member's data past the central directory") {
    std::string bad = zip;
    put32_at(bad, central_entry(bad, 3) + 20, 1 << 20);  // compressed size of the last member
    CHECK_THAT(read_error(temp, bad).message, Catch::Contains("sub/data.json") && Catch::Contains("runs past"));
  }
  SECTION("two members sharing bytes (a zip bomb's trick)") {
    std::string bad = zip;
    put32_at(bad, central_entry(bad, 1) + 42, u32_at(bad, central_entry(bad, 0) + 42));
    CHECK_THAT(read_error(temp, bad).message, Catch::Contains("overlaps") || Catch::Contains("names another file"));
  }
  SECTION("a local header that names another file") {
    std::string bad = zip;
    bad[30] = 'X';  // the first local header's name: `__init__.py` -> `X_init__.py`
    CHECK_THAT(read_error(temp, bad).message, Catch::Contains("names another file"));
  }
  SECTION("an encrypted member") {
    std::string bad = zip;
    bad[central_entry(bad, 2) + 8] = 1;
    CHECK_THAT(read_error(temp, bad).message, Catch::Contains("layers.py") && Catch::Contains("encrypted"));
  }
  SECTION("a ZIP64 end record") {
    std::string bad = zip;
    bad[bad.size() - 22 + 10] = '\xFF';
    bad[bad.size() - 22 + 11] = '\xFF';
    CHECK_THAT(read_error(temp, bad).message, Catch::Contains("ZIP64"));
  }
  SECTION("an entry count that does not match the directory") {
    std::string bad = zip;
    bad[bad.size() - 22 + 8] = 3;
    bad[bad.size() - 22 + 10] = 3;
    CHECK_THAT(read_error(temp, bad).message, Catch::Contains("announces 3"));
  }
  SECTION("a split archive") {
    std::string bad = zip;
    bad[bad.size() - 22 + 4] = 1;
    CHECK_THAT(read_error(temp, bad).message, Catch::Contains("several disks"));
  }
  SECTION("prepended bytes (the central directory no longer where it says)") {
    CHECK_THAT(read_error(temp, "#!/bin/sh\n" + zip).message, Catch::Contains("does not end where"));
  }
}

TEST_CASE("a symlink member is read as one, from its Unix mode") {
  testing::TempDir temp;
  std::string zip = package();
  put32_at(zip, central_entry(zip, 1) + 38, 0120777u << 16);
  auto archive = ZipArchive::read(write(temp, zip));
  REQUIRE(archive.has_value());
  CHECK(archive->members()[1].is_symlink());
  CHECK_FALSE(archive->members()[0].is_symlink());
}

TEST_CASE("a missing file or a folder is not an archive") {
  testing::TempDir temp;
  CHECK(ZipArchive::read(temp.path() / "none.zip").error().code == ErrorCode::kNotFound);
  CHECK(ZipArchive::read(temp.path()).error().code == ErrorCode::kCorruptFile);
}

}  // namespace
}  // namespace kernelhub
