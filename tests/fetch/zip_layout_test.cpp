// The zip build layout's package archive: what check_zip_package() refuses before anything
// imports it, each a typed error naming the archive, the member and what to do.
#include "kernelhub/fetch/internal/zip_layout.hpp"

#include <catch2/catch.hpp>
#include <fstream>

#include "kernelhub/base/internal/zip_writer.hpp"
#include "support/temp_dir.hpp"

namespace kernelhub {
namespace {

namespace fs = std::filesystem;

constexpr const char* kId = "_reference_kernels_cpu_abc";

Metadata zip_metadata() {
  Metadata m;
  m.name = "reference-kernels";
  m.id = kId;
  m.build_layout = BuildLayout::kZip;
  return m;
}

void put32_at(std::string& b, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + static_cast<std::size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xFF);
}

std::size_t first_central_entry(const std::string& zip) {
  std::size_t at = 0;
  for (int i = 3; i >= 0; --i) {
    at = (at << 8) | static_cast<std::uint8_t>(zip[zip.size() - 22 + 16 + static_cast<std::size_t>(i)]);
  }
  return at;
}

struct Variant {
  testing::TempDir temp;
  fs::path dir = temp.path() / "torch215-cxx11-cpu-x86_64-linux";
  Variant() { fs::create_directories(dir); }
  void put(const std::string& bytes) const {
    std::ofstream(zip_package_path(dir, kId), std::ios::binary | std::ios::trunc) << bytes;
  }
  void put(std::vector<ZipInput> members) const { put(write_zip(std::move(members)).value()); }
  Error error() const {
    auto checked = check_zip_package(dir, zip_metadata());
    REQUIRE_FALSE(checked.has_value());
    return checked.error();
  }
};

std::vector<ZipInput> with(const std::string& name) {
  return {{"__init__.py", "from ._ops import ops\n"}, {name, "x = 1\n"}};
}

TEST_CASE("a sound package archive passes; the files layout is not looked at") {
  Variant v;
  CHECK(zip_package_path(v.dir, kId) == v.dir / "_reference_kernels_cpu_abc.zip");
  v.put({{"__init__.py", "from ._ops import ops\n"},
         {"_ops.py", "ops = None\n"},
         {"layers/__init__.py", ""},
         {"layers/", ""},
         {"data/ünïcode.json", "{}"}});
  CHECK(check_zip_package(v.dir, zip_metadata()).has_value());
  Metadata files = zip_metadata();
  files.build_layout = BuildLayout::kFiles;
  fs::remove(zip_package_path(v.dir, kId));
  CHECK(check_zip_package(v.dir, files).has_value());
}

TEST_CASE("a member outside the package is refused") {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"../evil.py", "climbs out of the package"},
      {"layers/../../evil.py", "climbs out of the package"},
      {"..", "climbs out of the package"},
      {"/etc/evil.py", "absolute path"},
      {"C:/evil.py", "`:`"},
      {"a\\..\\..\\evil.py", "not a plain relative path"},
      {"a//b.py", "not a plain relative path"},
      {"./a.py", "not a plain relative path"},
      {std::string("a\nb.py"), "not a plain relative path"},
  };
  for (const auto& [name, why] : cases) {
    INFO(name);
    Variant v;
    v.put(with(name));
    const Error e = v.error();
    CHECK(e.code == ErrorCode::kCorruptFile);
    CHECK_THAT(e.message, Catch::Contains(why) && Catch::Contains("_reference_kernels_cpu_abc.zip") &&
                              Catch::Contains("Do not load it") && Catch::Contains("hub-publish --layout zip"));
    CHECK(zip_member_name_problem(name).has_value());
  }
  CHECK_FALSE(zip_member_name_problem("layers/__init__.py").has_value());
  CHECK_FALSE(zip_member_name_problem("layers/").has_value());
}

TEST_CASE("a symlink, a device or an unreadable method inside the archive is refused") {
  Variant v;
  std::string zip = write_zip(with("link.py")).value();
  // The second central entry (`link.py`) made a symlink, as `zip --symlinks` stores one.
  const std::size_t second = first_central_entry(zip) + 46 + std::string("__init__.py").size();
  put32_at(zip, second + 38, 0120777u << 16);
  v.put(zip);
  CHECK_THAT(v.error().message, Catch::Contains("member `link.py`: a symbolic link"));
  put32_at(zip, second + 38, 0020644u << 16);  // a character device
  v.put(zip);
  CHECK_THAT(v.error().message, Catch::Contains("device, FIFO or socket"));
  put32_at(zip, second + 38, 0100644u << 16);
  zip[second + 10] = 12;                   // bzip2, in the central entry and the local header alike
  const std::size_t local = 30 + 11 + 22;  // after __init__.py's header, name and data
  zip[local + 8] = 12;
  v.put(zip);
  CHECK_THAT(v.error().message, Catch::Contains("method 12"));
}

TEST_CASE("a duplicate member, a legacy-encoded name or no __init__.py is refused") {
  Variant v;
  std::string zip = write_zip({{"__init__.py", "a"}, {"a.py", "b"}, {"b.py", "c"}}).value();
  for (std::size_t at = zip.find("b.py"); at != std::string::npos; at = zip.find("b.py", at)) zip[at] = 'a';
  v.put(zip);
  CHECK_THAT(v.error().message, Catch::Contains("`a.py` twice"));

  std::string latin = write_zip(with("caf\xE9.py")).value();  // not UTF-8, no UTF-8 flag
  v.put(latin);
  CHECK(v.error().code == ErrorCode::kCorruptFile);

  v.put({{"_ops.py", "ops = None\n"}, {"pkg/__init__.py", ""}});
  const Error e = v.error();
  CHECK(e.code == ErrorCode::kCorruptFile);
  CHECK_THAT(e.message, Catch::Contains("no __init__.py at its root"));
}

TEST_CASE("a cut archive is refused as not whole; a missing one names the file") {
  Variant v;
  const std::string zip = write_zip(with("_ops.py")).value();
  v.put(zip.substr(0, zip.size() / 2));
  Error e = v.error();
  CHECK(e.code == ErrorCode::kCorruptFile);
  CHECK_THAT(e.message, Catch::Contains("package archive") && Catch::Contains("cut short or damaged"));
  fs::remove(zip_package_path(v.dir, kId));
  e = v.error();
  CHECK(e.code == ErrorCode::kNotFound);
  CHECK_THAT(e.message, Catch::Contains("\"build-layout\": \"zip\"") && Catch::Contains(".zip` is not in it"));
}

}  // namespace
}  // namespace kernelhub
